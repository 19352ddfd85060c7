//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-cri/vk-cri/cri"
)

// podLogRoot is the test node's --pod-log-dir (hack/node.sh).
func podLogRoot() string { return filepath.Join(s.env["STACK_DIR"], "nodes", nodeName, "pods-logs") }

// deadInstances counts the instances of a pod's container that are not running.
func deadInstances(t *testing.T, uid, container string) (dead, all int) {
	_, cs := runtimeObjects(t, uid)
	for _, c := range cs {
		if c.GetMetadata().GetName() != container {
			continue
		}
		all++
		if c.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
			dead++
		}
	}
	return dead, all
}

// A crash-looping container keeps at most the kubelet's one dead instance
// (--maximum-dead-containers-per-container 1) beside the newest, however often it restarts: two
// instances at most at any time (the newest may have just exited, or not be started yet), one
// dead once the collector or the next sync ran; once the pod is deleted its containers, sandbox
// and log directory are gone.
func TestContainerGCCrashLoopKeepsOneDeadInstance(t *testing.T) {
	ns := newNamespace(t)
	pod := createPod(t, ns, basePod("crash", busybox("c", "echo crashed; exit 1")))
	maxAll := 0
	sample := func() int {
		d, all := deadInstances(t, string(pod.UID), "c")
		maxAll = max(maxAll, all)
		return d
	}
	waitPod(t, ns, "crash", 3*time.Minute, "restarted 3 times, in back-off", func(p *v1.Pod) bool {
		sample()
		return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].RestartCount >= 3 &&
			p.Status.ContainerStatuses[0].State.Waiting != nil
	})
	// In the 40 s back-off: one dead instance within the collector's period.
	err := wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, 75*time.Second, true, func(context.Context) (bool, error) {
		return sample() <= 1, nil
	})
	if err != nil {
		t.Errorf("more than one dead instance of the crash-looping container after 75 s")
	}
	if maxAll > 2 {
		t.Errorf("up to %d instances of the container at once, want at most 2 (one dead, the newest)", maxAll)
	}
	logDir := filepath.Join(podLogRoot(), fmt.Sprintf("%s_%s_%s", ns, pod.Name, pod.UID))
	if _, err := os.Stat(logDir); err != nil {
		t.Fatalf("the pod's log directory: %v", err)
	}
	deletePodAndWait(t, ns, "crash")
	sbs, cs := runtimeObjects(t, string(pod.UID))
	if len(sbs) != 0 || len(cs) != 0 {
		t.Errorf("after deletion: %d sandboxes, %d containers left", len(sbs), len(cs))
	}
	if _, err := os.Stat(logDir); !os.IsNotExist(err) {
		t.Errorf("the deleted pod's log directory is still there: %v", err)
	}
}

// What the node's owner label marks but no pod of the node accounts for (a pod deleted while
// vk-cri was away, say) is removed by container GC within its 1 minute period: the dead
// container with its log file, the sandbox, the pod's log directory. Another node's objects stay.
func TestContainerGCRemovesWhatNoPodAccountsFor(t *testing.T) {
	ctx := ctxFor(t, 4*time.Minute)
	uid := "gc-orphan-" + rand.String(8)
	mine := runOrphanPod(t, ctx, uid, nodeName)
	other := runOrphanPod(t, ctx, uid+"-other", "vk-gc-nobody")
	t.Cleanup(func() {
		c := context.Background()
		_ = s.runtime.Runtime.StopPodSandbox(c, other)
		_ = s.runtime.Runtime.RemovePodSandbox(c, other)
	})
	logDir := filepath.Join(podLogRoot(), "gc_orphan_"+uid)
	err := wait.PollUntilContextTimeout(ctx, time.Second, 150*time.Second, true, func(context.Context) (bool, error) {
		sbs, cs := runtimeObjects(t, uid)
		_, statErr := os.Stat(logDir)
		return len(sbs) == 0 && len(cs) == 0 && os.IsNotExist(statErr), nil
	})
	if err != nil {
		sbs, cs := runtimeObjects(t, uid)
		t.Fatalf("the unaccounted pod's objects are still there after 150s: %d sandboxes, %d containers (sandbox %s)", len(sbs), len(cs), mine)
	}
	if sbs, cs := runtimeObjects(t, uid+"-other"); len(sbs) != 1 || len(cs) != 1 {
		t.Errorf("another node's sandbox and container were touched: %d sandboxes, %d containers", len(sbs), len(cs))
	}
}

// runOrphanPod makes, through CRI, a sandbox and an exited container labelled as owner's, with
// a log file in the test node's pod log root, and returns the sandbox's ID.
func runOrphanPod(t *testing.T, ctx context.Context, uid, owner string) string {
	t.Helper()
	labels := map[string]string{cri.PodUIDLabel: uid, cri.PodNameLabel: "orphan", cri.PodNamespaceLabel: "gc", cri.OwnerLabel: owner}
	logDir := filepath.Join(podLogRoot(), "gc_orphan_"+uid)
	sbCfg := &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: "orphan", Namespace: "gc", Uid: uid},
		Labels:       labels,
		LogDirectory: logDir,
		Linux:        &runtimeapi.LinuxPodSandboxConfig{},
	}
	sb, err := s.runtime.Runtime.RunPodSandbox(ctx, sbCfg, "")
	if err != nil {
		t.Fatalf("RunPodSandbox: %v", err)
	}
	cLabels := map[string]string{cri.ContainerNameLabel: "c"}
	for k, v := range labels {
		cLabels[k] = v
	}
	id, err := s.runtime.Runtime.CreateContainer(ctx, sb, &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: "c"},
		Image:    &runtimeapi.ImageSpec{Image: image("busybox:latest")},
		Command:  []string{"true"},
		Labels:   cLabels,
		LogPath:  "c/0.log",
	}, sbCfg)
	if err != nil {
		t.Fatalf("CreateContainer: %v", err)
	}
	if err := s.runtime.Runtime.StartContainer(ctx, id); err != nil {
		t.Fatalf("StartContainer: %v", err)
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		st, err := s.runtime.Runtime.ContainerStatus(ctx, id, false)
		return err == nil && st.GetStatus().GetState() == runtimeapi.ContainerState_CONTAINER_EXITED, nil
	})
	if err != nil {
		t.Fatalf("the orphan's container did not exit: %v", err)
	}
	if err := s.runtime.Runtime.StopPodSandbox(ctx, sb); err != nil {
		t.Fatalf("StopPodSandbox: %v", err)
	}
	return sb
}

// A container that writes past its limits.ephemeral-storage is evicted with the kubelet's
// reason and message (the pod's limit, the sum of its containers', is checked first).
func TestEvictionEphemeralStorageLimit(t *testing.T) {
	ns := newNamespace(t)
	c := busybox("writer", "dd if=/dev/zero of=/fill bs=1M count=100 2>/dev/null; sleep 3600")
	c.Resources.Limits = v1.ResourceList{v1.ResourceEphemeralStorage: resource.MustParse("10Mi")}
	createPod(t, ns, basePod("writer", c))
	started := time.Now()
	p := waitPod(t, ns, "writer", 2*time.Minute, "evicted", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodFailed })
	t.Logf("evicted %v after creation", time.Since(started).Round(time.Second))
	if want := "Pod ephemeral local storage usage exceeds the total limit of containers 10Mi. "; p.Status.Reason != "Evicted" || p.Status.Message != want {
		t.Errorf("reason %q message %q, want Evicted %q", p.Status.Reason, p.Status.Message, want)
	}
	for _, cond := range p.Status.Conditions {
		if cond.Type == v1.DisruptionTarget {
			t.Errorf("an eviction for the pod's own limit carries no DisruptionTarget condition (the kubelet's): %+v", cond)
		}
	}
}

// With --pod-max-pids the pod's cgroup has that pids.max, and the pod cannot fork past it: the
// kernel refuses the spawner's forks (EAGAIN, "Resource temporarily unavailable") short of its
// 40 processes. (The refusals are counted in pids.events of the container's cgroup, where the
// fork was tried, not the pod's.)
func TestPodPidsLimitStopsForks(t *testing.T) {
	if _, err := os.Stat("/sys/fs/cgroup/pids"); err != nil {
		t.Skip("the node's cgroup v1 pids hierarchy is not visible here")
	}
	t.Cleanup(func() { restartNode(t, "") })
	restartNode(t, "--pod-max-pids=16")
	ns := newNamespace(t)
	// The spawner runs in a subshell: ash exits when a fork fails, and the main shell must stay
	// (exec: without a fork) so that the pod's processes can be counted.
	script := `(i=0; while [ $i -lt 40 ]; do sleep 600 & i=$((i+1)); echo spawned $i; done; echo all spawned); echo spawner ended; exec sleep 3600`
	pod := createPod(t, ns, basePod("forker", busybox("c", script)))
	waitPod(t, ns, "forker", 2*time.Minute, "running", isRunningReady)
	podCgroup := fmt.Sprintf("vk-cri-%s/kubepods/besteffort/pod%s", nodeName, pod.UID)
	if got := hostCgroupFile(t, "pids", podCgroup, "pids.max"); got != "16" {
		t.Errorf("pod cgroup pids.max = %s, want 16", got)
	}
	var logs string
	err := wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		logs = podLogs(t, ns, "forker", "c")
		return strings.Contains(logs, "spawner ended"), nil
	})
	if err != nil {
		t.Fatalf("the spawner did not end: logs %q", logs)
	}
	if strings.Contains(logs, "all spawned") {
		t.Errorf("40 processes were forked in a pod limited to 16: %q", logs)
	}
	if !strings.Contains(logs, "Resource temporarily unavailable") {
		t.Errorf("no fork was refused: %q", logs)
	}
	current, _ := strconv.Atoi(hostCgroupFile(t, "pids", podCgroup, "pids.current"))
	if current > 16 {
		t.Errorf("pids.current %d, want at most 16", current)
	}
	f := strings.Fields(logs)
	t.Logf("logs end: %s; pod pids.current %d", strings.Join(f[max(0, len(f)-9):], " "), current)
}

// A node started with --capacity memory=1Gi reports that capacity, and evicts when its pods
// push memory.available (of its 1Gi) below the threshold while the host has plenty.
func TestDeclaredCapacityEvictsWithinTheNodesMemory(t *testing.T) {
	t.Cleanup(func() { restartNode(t, "") })
	restartNode(t, "--capacity=memory=1Gi --eviction-hard=memory.available<300Mi")
	node, err := s.kube.CoreV1().Nodes().Get(ctxFor(t, 10*time.Second), nodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	capMem, allocMem := node.Status.Capacity[v1.ResourceMemory], node.Status.Allocatable[v1.ResourceMemory]
	if capMem.String() != "1Gi" || allocMem.String() != "724Mi" {
		t.Errorf("capacity memory %s allocatable %s, want 1Gi and 724Mi", capMem.String(), allocMem.String())
	}
	if got := hostCgroupFile(t, "memory", "vk-cri-"+nodeName+"/kubepods", "memory.limit_in_bytes"); got != fmt.Sprint(1<<30) {
		t.Errorf("kubepods memory.limit_in_bytes = %s, want 1Gi", got)
	}
	ns := newNamespace(t)
	// Two pods fill 400Mi each of memory-backed emptyDirs: 800Mi of the node's 1Gi, 224Mi left.
	for _, name := range []string{"fill-a", "fill-b"} {
		p := basePod(name, busybox("c", "dd if=/dev/zero of=/mem/fill bs=1M count=400 2>/dev/null; echo filled; sleep 3600"))
		p.Spec.Volumes = []v1.Volume{{Name: "mem", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory}}}}
		p.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "mem", MountPath: "/mem"}}
		createPod(t, ns, p)
	}
	var evicted *v1.Pod
	err = wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		for _, name := range []string{"fill-a", "fill-b"} {
			p, err := s.kube.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			if err == nil && p.Status.Phase == v1.PodFailed {
				evicted = p
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no pod evicted within 2 minutes")
	}
	if !strings.HasPrefix(evicted.Status.Message, "The node was low on resource: memory. Threshold quantity: 300Mi, available: ") || evicted.Status.Reason != "Evicted" {
		t.Errorf("evicted %s: reason %q message %q", evicted.Name, evicted.Status.Reason, evicted.Status.Message)
	}
	avail := hostMemAvailable(t)
	if avail < 4<<30 {
		t.Logf("the host had only %d MiB available", avail>>20)
	}
	t.Logf("%s evicted: %q; host MemAvailable %d MiB", evicted.Name, evicted.Status.Message, avail>>20)
	if c := nodeCondition(t, v1.NodeMemoryPressure); c == nil || c.Status != v1.ConditionTrue {
		t.Errorf("MemoryPressure %+v", c)
	}
	// Deleted before the node restarts (see TestEvictionSoftThresholdWaitsForItsGracePeriod).
	deletePodAndWait(t, ns, "fill-a")
	deletePodAndWait(t, ns, "fill-b")
}

func hostMemAvailable(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "MemAvailable:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}
