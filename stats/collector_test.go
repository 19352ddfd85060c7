package stats

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/prometheus/common/expfmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	cadvisorapi "github.com/google/cadvisor/lib/model"
	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	critest "k8s.io/cri-api/pkg/apis/testing"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/ptr"

	"github.com/vk-cri/vk-cri/internal/golden"
)

// go test ./stats -run Golden -update rewrites the golden files from the current output
// (internal/golden).

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// fakeMachine is cAdvisor with fixed answers.
type fakeMachine struct {
	root *cadvisorapi.ContainerInfo
	fs   map[string]cadvisorapi.FsInfo
}

func (f fakeMachine) MachineInfo() (*cadvisorapi.MachineInfo, error) {
	return &cadvisorapi.MachineInfo{NumCores: 2, MemoryCapacity: 8 << 30}, nil
}
func (f fakeMachine) RootInfo() (*cadvisorapi.ContainerInfo, error) { return f.root, nil }
func (f fakeMachine) VersionInfo() (*cadvisorapi.VersionInfo, error) {
	return &cadvisorapi.VersionInfo{}, nil
}
func (f fakeMachine) DirFsInfo(dir string) (cadvisorapi.FsInfo, error) {
	fi, ok := f.fs[dir]
	if !ok {
		return fi, fmt.Errorf("no file system for %s", dir)
	}
	return fi, nil
}

// fakeCgroups answers from a sequence of readings per cgroup (one per collection).
type fakeCgroups struct {
	readings map[string][]*cadvisorapi.ContainerStats
	limits   map[string]uint64
	round    int
}

func (f *fakeCgroups) Read(name string, _ bool) (*cadvisorapi.ContainerStats, error) {
	rs, ok := f.readings[name]
	if !ok || len(rs) == 0 {
		return nil, fmt.Errorf("cgroup %s: %w", name, os.ErrNotExist)
	}
	return rs[min(f.round, len(rs)-1)], nil
}
func (f *fakeCgroups) Exists(name string) bool        { _, ok := f.readings[name]; return ok }
func (f *fakeCgroups) MemoryLimit(name string) uint64 { return f.limits[name] }

func cgroupStats(at time.Time, cpuNs, workingSet, rss uint64, procs uint64, withNet bool) *cadvisorapi.ContainerStats {
	st := &cadvisorapi.ContainerStats{Timestamp: at, Cpu: &cadvisorapi.CpuStats{}, Memory: &cadvisorapi.MemoryStats{}, Processes: &cadvisorapi.ProcessStats{}}
	st.Cpu.Usage.Total = cpuNs
	st.Memory.Usage = workingSet + 4096
	st.Memory.WorkingSet = workingSet
	st.Memory.RSS = rss
	st.Memory.ContainerData.Pgfault = 1000
	st.Memory.ContainerData.Pgmajfault = 2
	st.Processes.ProcessCount = procs
	if withNet {
		st.Network = &cadvisorapi.NetworkStats{Interfaces: []cadvisorapi.InterfaceStats{{Name: "eth0", RxBytes: 1500, TxBytes: 700}}}
	}
	return st
}

const (
	nodeName   = "node-1"
	cgroupRoot = "/vk-cri-node-1"
	rootDir    = "/var/lib/vk-cri"
	logRoot    = "/var/log/pods"
	imageFsMnt = "/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs"
)

func owner() map[string]string { return map[string]string{"io.vk-cri.node": nodeName} }

func sandbox(id, name, uid string, state runtimeapi.PodSandboxState, labels map[string]string) *critest.FakePodSandbox {
	return &critest.FakePodSandbox{PodSandboxStatus: runtimeapi.PodSandboxStatus{
		Id: id, Metadata: &runtimeapi.PodSandboxMetadata{Name: name, Namespace: "default", Uid: uid},
		State: state, CreatedAt: t0.UnixNano(), Labels: labels,
	}}
}

func fakeCtr(id, sandboxID, name string, state runtimeapi.ContainerState, labels map[string]string) *critest.FakeContainer {
	return &critest.FakeContainer{SandboxID: sandboxID, ContainerStatus: runtimeapi.ContainerStatus{
		Id: id, Metadata: &runtimeapi.ContainerMetadata{Name: name}, State: state,
		CreatedAt: t0.Add(time.Second).UnixNano(), Labels: labels, Image: &runtimeapi.ImageSpec{Image: "busybox"},
	}}
}

// fixture is a node with two pods of its own, one of another node on the same runtime and an
// exited container: only this node's running ones are reported.
func fixture(t *testing.T) *Collector {
	rt := critest.NewFakeRuntimeService()
	mine, other := owner(), map[string]string{"io.vk-cri.node": "node-2"}
	rt.SetFakeSandboxes([]*critest.FakePodSandbox{
		sandbox("sb-web", "web", "uid-web", runtimeapi.PodSandboxState_SANDBOX_READY, mine),
		sandbox("sb-batch", "batch", "uid-batch", runtimeapi.PodSandboxState_SANDBOX_READY, mine),
		sandbox("sb-old", "web", "uid-old", runtimeapi.PodSandboxState_SANDBOX_NOTREADY, mine),
		sandbox("sb-foreign", "foreign", "uid-foreign", runtimeapi.PodSandboxState_SANDBOX_READY, other),
	})
	rt.SetFakeContainers([]*critest.FakeContainer{
		fakeCtr("c-app", "sb-web", "app", runtimeapi.ContainerState_CONTAINER_RUNNING, mine),
		fakeCtr("c-side", "sb-web", "sidecar", runtimeapi.ContainerState_CONTAINER_RUNNING, mine),
		fakeCtr("c-exited", "sb-web", "init", runtimeapi.ContainerState_CONTAINER_EXITED, mine),
		fakeCtr("c-batch", "sb-batch", "worker", runtimeapi.ContainerState_CONTAINER_RUNNING, mine),
		fakeCtr("c-foreign", "sb-foreign", "x", runtimeapi.ContainerState_CONTAINER_RUNNING, other),
	})
	ts := t0.Add(10 * time.Second).UnixNano()
	attrs := func(id, name string) *runtimeapi.ContainerAttributes {
		return &runtimeapi.ContainerAttributes{Id: id, Metadata: &runtimeapi.ContainerMetadata{Name: name}}
	}
	// containerd 1.6 gives cumulative CPU but no rate, and memory without page faults; the
	// cgroup readings (taken with the pod's) win where there are some.
	rt.SetFakeContainerStats([]*runtimeapi.ContainerStats{
		{Attributes: attrs("c-app", "app"),
			Cpu:    &runtimeapi.CpuUsage{Timestamp: ts, UsageCoreNanoSeconds: &runtimeapi.UInt64Value{Value: 3_000_000_000}},
			Memory: &runtimeapi.MemoryUsage{Timestamp: ts, WorkingSetBytes: &runtimeapi.UInt64Value{Value: 20 << 20}, UsageBytes: &runtimeapi.UInt64Value{Value: 24 << 20}, RssBytes: &runtimeapi.UInt64Value{Value: 18 << 20}},
			WritableLayer: &runtimeapi.FilesystemUsage{Timestamp: ts, FsId: &runtimeapi.FilesystemIdentifier{Mountpoint: imageFsMnt},
				UsedBytes: &runtimeapi.UInt64Value{Value: 8192}, InodesUsed: &runtimeapi.UInt64Value{Value: 3}}},
		{Attributes: attrs("c-side", "sidecar"),
			Cpu:    &runtimeapi.CpuUsage{Timestamp: ts, UsageCoreNanoSeconds: &runtimeapi.UInt64Value{Value: 1_000_000_000}, UsageNanoCores: &runtimeapi.UInt64Value{Value: 5_000_000}},
			Memory: &runtimeapi.MemoryUsage{Timestamp: ts, WorkingSetBytes: &runtimeapi.UInt64Value{Value: 4 << 20}}},
		{Attributes: attrs("c-batch", "worker")},
		{Attributes: attrs("c-foreign", "x"),
			Cpu: &runtimeapi.CpuUsage{Timestamp: ts, UsageCoreNanoSeconds: &runtimeapi.UInt64Value{Value: 99}}},
	})
	images := critest.NewFakeImageService()
	images.SetFakeFilesystemUsage([]*runtimeapi.FilesystemUsage{{Timestamp: ts, FsId: &runtimeapi.FilesystemIdentifier{Mountpoint: imageFsMnt},
		UsedBytes: &runtimeapi.UInt64Value{Value: 300 << 20}, InodesUsed: &runtimeapi.UInt64Value{Value: 1200}}})

	root := &cadvisorapi.ContainerInfo{ContainerReference: cadvisorapi.ContainerReference{Name: "/"}}
	root.Spec.HasCpu, root.Spec.HasMemory = true, true
	root.Spec.Memory.Limit = 1 << 63 // the root cgroup has no limit of its own
	first := cgroupStats(t0, 100_000_000_000, 2<<30, 1<<30, 0, false)
	second := cgroupStats(t0.Add(10*time.Second), 110_000_000_000, 3<<30, 1<<30, 0, true)
	second.CpuInst = &cadvisorapi.CpuInstStats{Usage: cadvisorapi.CpuInstUsage{Total: 1_000_000_000}}
	root.Stats = []*cadvisorapi.ContainerStats{first, second}
	inodes, free := uint64(1_000_000), uint64(900_000)
	machine := fakeMachine{root: root, fs: map[string]cadvisorapi.FsInfo{
		rootDir:    {Device: "/dev/vda", Mountpoint: "/", Capacity: 100 << 30, Available: 60 << 30, Usage: 40 << 30, Inodes: &inodes, InodesFree: &free},
		imageFsMnt: {Device: "/dev/vdb", Mountpoint: "/var/lib/containerd", Capacity: 50 << 30, Available: 45 << 30, Usage: 5 << 30, Inodes: &inodes, InodesFree: &free},
	}}
	pods := cgroupRoot + "/kubepods"
	web := pods + "/besteffort/poduid-web"
	batch := pods + "/burstable/poduid-batch"
	cg := &fakeCgroups{
		readings: map[string][]*cadvisorapi.ContainerStats{
			pods: {cgroupStats(t0, 50_000_000_000, 600<<20, 500<<20, 0, false), cgroupStats(t0.Add(10*time.Second), 52_000_000_000, 640<<20, 520<<20, 0, false)},
			web:  {cgroupStats(t0, 3_500_000_000, 26<<20, 22<<20, 0, true), cgroupStats(t0.Add(10*time.Second), 4_500_000_000, 26<<20, 22<<20, 0, true)},
			// The batch pod's cgroup is gone (a race with its removal): its figures are summed.
			web + "/c-app":  {cgroupStats(t0, 2_000_000_000, 20<<20, 18<<20, 3, false), cgroupStats(t0.Add(10*time.Second), 3_000_000_000, 20<<20, 18<<20, 3, false)},
			web + "/c-side": {cgroupStats(t0, 900_000_000, 4<<20, 3<<20, 1, false), cgroupStats(t0.Add(10*time.Second), 1_000_000_000, 4<<20, 3<<20, 1, false)},
		},
		limits: map[string]uint64{web + "/c-side": 64 << 20},
	}
	_ = batch
	usages := map[string]usage{
		filepath.Join(logRoot, "default_web_uid-web", "app"):                                     {Bytes: 12288, Inodes: 2},
		filepath.Join(logRoot, "default_web_uid-web", "sidecar"):                                 {Bytes: 4096, Inodes: 2},
		filepath.Join(rootDir, "pods", "uid-web", "volumes", "kubernetes.io~empty-dir", "cache"): {Bytes: 1 << 20, Inodes: 10},
		filepath.Join(rootDir, "pods", "uid-web", "volumes", "kubernetes.io~configmap", "conf"):  {Bytes: 8192, Inodes: 4},
	}
	webPod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-web"}, Spec: v1.PodSpec{Volumes: []v1.Volume{
		{Name: "cache", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
		{Name: "conf", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{}}},
		{Name: "data", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/data"}}},
	}}}
	c := newCollector(Config{NodeName: nodeName, OwnerLabel: "io.vk-cri.node", CgroupRoot: cgroupRoot, RootDir: rootDir, PodLogRoot: logRoot,
		Pods: func() []*v1.Pod { return []*v1.Pod{webPod} }}, machine, cg, rt, images, logrus.NewEntry(logrus.New()))
	clock := t0.Add(10 * time.Second)
	c.host = hostProbe{
		now:      func() time.Time { return clock },
		bootTime: func(time.Time) time.Time { return t0.Add(-time.Hour) },
		rlimit: func(now time.Time) *statsapi.RlimitStats {
			return &statsapi.RlimitStats{Time: metav1.NewTime(now), MaxPID: ptr.To[int64](32768), NumOfRunningProcesses: ptr.To[int64](300)}
		},
		diskUsage: func(dir string) (usage, error) {
			u, ok := usages[dir]
			if !ok {
				return usage{}, os.ErrNotExist
			}
			return u, nil
		},
		fsSize: func(string) (fsSize, error) {
			return fsSize{Capacity: 100 << 30, Available: 60 << 30, Inodes: 1_000_000, InodesFree: 900_000}, nil
		},
	}
	// A first collection gives the cgroups a previous reading, so that the second has rates.
	if _, err := c.Summary(context.Background()); err != nil {
		t.Fatalf("first summary: %v", err)
	}
	cg.round = 1
	return c
}

func TestSummaryGolden(t *testing.T) {
	c := fixture(t)
	s, err := c.Summary(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/summary.golden.json", append(got, '\n'))
}

func TestSummaryConsistency(t *testing.T) {
	s, err := fixture(t).Summary(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Pods) != 2 {
		t.Fatalf("want this node's two ready pods, got %d", len(s.Pods))
	}
	for _, p := range s.Pods {
		var cpu, ws uint64
		for _, c := range p.Containers {
			cpu += *c.CPU.UsageCoreNanoSeconds
			ws += *c.Memory.WorkingSetBytes
		}
		if cpu > *p.CPU.UsageCoreNanoSeconds || ws > *p.Memory.WorkingSetBytes {
			t.Errorf("pod %s: containers (cpu %d, ws %d) exceed the pod (cpu %d, ws %d)", p.PodRef.Name, cpu, ws, *p.CPU.UsageCoreNanoSeconds, *p.Memory.WorkingSetBytes)
		}
		if *p.CPU.UsageCoreNanoSeconds > *s.Node.CPU.UsageCoreNanoSeconds || *p.Memory.WorkingSetBytes > *s.Node.Memory.WorkingSetBytes {
			t.Errorf("pod %s exceeds the node", p.PodRef.Name)
		}
	}
}

func TestResourceMetricsGolden(t *testing.T) {
	s, err := fixture(t).Summary(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for name, in := range map[string]*statsapi.Summary{"resource_metrics": s, "resource_metrics_error": nil} {
		t.Run(name, func(t *testing.T) {
			fams, err := ResourceMetrics(in)
			if err != nil {
				t.Fatal(err)
			}
			// The text exposition format, not the protobuf String(): protobuf randomises the
			// spacing of String() per binary, so that output never matches a golden file.
			var b bytes.Buffer
			for _, f := range fams {
				if _, err := expfmt.MetricFamilyToText(&b, f); err != nil {
					t.Fatal(err)
				}
			}
			golden.Check(t, "testdata/"+name+".golden.txt", b.Bytes())
		})
	}
}
