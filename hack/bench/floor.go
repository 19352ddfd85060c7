// The runtime floor: the same sandbox and container work done directly on CRI.

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-cri/vk-cri/cri"
)

type floorBench struct {
	rt       *cri.Client
	runID    string
	imageRef string
	image    string
	logRoot  string
}

type floorTimes struct {
	sandbox, create, start time.Duration
	done                   time.Time
	id                     string
	err                    error
}

func (f *floorBench) one(ctx context.Context, i int) floorTimes {
	var t floorTimes
	uid := fmt.Sprintf("%s-%03d", f.runID, i)
	name := "floor-" + uid
	logDir := filepath.Join(f.logRoot, "vk-bench-floor_"+name+"_"+uid)
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		t.err = err
		return t
	}
	nsOpts := &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_POD, Pid: runtimeapi.NamespaceMode_CONTAINER, Ipc: runtimeapi.NamespaceMode_POD}
	labels := map[string]string{floorLabel: f.runID}
	sbCfg := &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: name, Namespace: "vk-bench-floor", Uid: uid},
		Hostname:     name,
		LogDirectory: logDir,
		Labels:       labels,
		Linux: &runtimeapi.LinuxPodSandboxConfig{
			CgroupParent:    floorCgroupRoot + "/kubepods/besteffort/pod" + uid,
			SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{NamespaceOptions: nsOpts},
		},
	}
	t0 := time.Now()
	id, err := f.rt.Runtime.RunPodSandbox(ctx, sbCfg, "")
	t.sandbox = time.Since(t0)
	if err != nil {
		t.err = fmt.Errorf("RunPodSandbox: %w", err)
		return t
	}
	t.id = id
	cCfg := &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: containerName},
		Image:    &runtimeapi.ImageSpec{Image: f.imageRef, UserSpecifiedImage: f.image},
		Args:     []string{"serve", "--port", strconv.Itoa(httpPort)},
		Labels:   labels,
		LogPath:  containerName + "/0.log",
		Linux: &runtimeapi.LinuxContainerConfig{
			SecurityContext: &runtimeapi.LinuxContainerSecurityContext{NamespaceOptions: nsOpts},
		},
	}
	t1 := time.Now()
	cid, err := f.rt.Runtime.CreateContainer(ctx, id, cCfg, sbCfg)
	t.create = time.Since(t1)
	if err != nil {
		t.err = fmt.Errorf("CreateContainer: %w", err)
		return t
	}
	t2 := time.Now()
	err = f.rt.Runtime.StartContainer(ctx, cid)
	t.done = time.Now()
	t.start = t.done.Sub(t2)
	if err != nil {
		t.err = fmt.Errorf("StartContainer: %w", err)
	}
	return t
}

// teardown stops and removes the sandboxes at once (their containers go with them).
func (f *floorBench) teardown(ids []string) time.Duration {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	for _, id := range ids {
		if id == "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f.rt.Runtime.StopPodSandbox(ctx, id); err != nil {
				logf("floor: stopping sandbox %s: %v", id, err)
			}
			if err := f.rt.Runtime.RemovePodSandbox(ctx, id); err != nil {
				logf("floor: removing sandbox %s: %v", id, err)
			}
		}()
	}
	wg.Wait()
	return time.Since(start)
}

// removeFloorSandboxes removes every sandbox carrying floorLabel (with this value, or any if
// runID is ""), the floor's log directories and its empty cgroup directories.
func removeFloorSandboxes(rt *cri.Client, runID string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sbs, err := rt.Runtime.ListPodSandbox(ctx, nil)
	if err != nil {
		logf("floor cleanup: listing sandboxes: %v", err)
		return
	}
	var ids []string
	for _, sb := range sbs {
		if v, ok := sb.Labels[floorLabel]; ok && (runID == "" || v == runID) {
			ids = append(ids, sb.Id)
		}
	}
	if len(ids) > 0 {
		logf("floor cleanup: removing %d sandboxes", len(ids))
		(&floorBench{rt: rt}).teardown(ids)
	}
	removeEmptyCgroups()
}

// removeEmptyCgroups removes the floor's cgroup directories (runc leaves the parents), deepest
// first, in every cgroup v1 hierarchy and in the v2 tree; a directory still in use stays.
func removeEmptyCgroups() {
	roots, _ := filepath.Glob("/sys/fs/cgroup/*" + floorCgroupRoot)
	if fi, err := os.Stat("/sys/fs/cgroup" + floorCgroupRoot); err == nil && fi.IsDir() {
		roots = append(roots, "/sys/fs/cgroup"+floorCgroupRoot)
	}
	for _, root := range roots {
		var dirs []string
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		sort.Slice(dirs, func(i, j int) bool { return strings.Count(dirs[i], "/") > strings.Count(dirs[j], "/") })
		for _, d := range dirs {
			_ = syscall.Rmdir(d)
		}
	}
}

func runFloor(ctx context.Context, endpoint, image, stackDir, runID string, n, seq int) *FloorResult {
	res := &FloorResult{Endpoint: endpoint, Image: image, ConcN: n}
	rt, err := cri.Connect(ctx, endpoint, 2*time.Minute)
	if err != nil {
		res.Errors = append(res.Errors, err.Error())
		return res
	}
	st, err := rt.Images.ImageStatus(ctx, &runtimeapi.ImageSpec{Image: image}, false)
	if err == nil && (st == nil || st.Image == nil) {
		logf("floor: pulling %s (not timed)", image)
		_, err = rt.Images.PullImage(ctx, &runtimeapi.ImageSpec{Image: image}, nil, nil)
		if err == nil {
			st, err = rt.Images.ImageStatus(ctx, &runtimeapi.ImageSpec{Image: image}, false)
		}
	}
	if err != nil || st == nil || st.Image == nil {
		res.Errors = append(res.Errors, fmt.Sprintf("image %s: %v", image, err))
		return res
	}
	logRoot, err := os.MkdirTemp(stackDir, "bench-floor-logs-")
	if err != nil {
		res.Errors = append(res.Errors, err.Error())
		return res
	}
	defer os.RemoveAll(logRoot)
	f := &floorBench{rt: rt, runID: runID, imageRef: st.Image.Id, image: image, logRoot: logRoot}
	defer removeFloorSandboxes(rt, runID)

	logf("floor: %d sandboxes one after the other on %s", seq, endpoint)
	var seqIDs []string
	for i := 0; i < seq && ctx.Err() == nil; i++ {
		t := f.one(ctx, i)
		seqIDs = append(seqIDs, t.id)
		if t.err != nil {
			res.Errors = append(res.Errors, t.err.Error())
			continue
		}
		res.SeqRunPodSandboxMs = append(res.SeqRunPodSandboxMs, ms(t.sandbox))
		res.SeqCreateMs = append(res.SeqCreateMs, ms(t.create))
		res.SeqStartMs = append(res.SeqStartMs, ms(t.start))
		res.SeqTotalMs = append(res.SeqTotalMs, ms(t.sandbox+t.create+t.start))
	}
	f.teardown(seqIDs)

	logf("floor: %d sandboxes at once", n)
	times := make([]floorTimes, n)
	var wg sync.WaitGroup
	release := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-release
			times[i] = f.one(ctx, seq+i)
		}()
	}
	start := time.Now()
	close(release)
	wg.Wait()
	var last time.Time
	var ids []string
	for _, t := range times {
		ids = append(ids, t.id)
		if t.err != nil {
			res.Errors = append(res.Errors, t.err.Error())
			continue
		}
		res.ConcPerPodMs = append(res.ConcPerPodMs, ms(t.done.Sub(start)))
		if t.done.After(last) {
			last = t.done
		}
	}
	if len(res.ConcPerPodMs) == n {
		res.ConcAllMs = ms(last.Sub(start))
	}
	res.ConcTeardownMs = ms(f.teardown(ids))
	logf("floor: %d started in %s, stopped and removed in %s", len(res.ConcPerPodMs), fmtMs(res.ConcAllMs), fmtMs(res.ConcTeardownMs))
	return res
}
