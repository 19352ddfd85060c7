//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
)

// In-place pod resize (kubectl patch --subresource resize), as the kubelet v1.37 does it: the
// running container keeps running with new cgroup values, the status shows the resources it
// runs with and those allocated, PodResizeInProgress while it happens, ResizeStarted and
// ResizeCompleted events; a resize policy of RestartContainer restarts the container instead;
// a resize that does not fit next to the node's other pods waits (PodResizePending Deferred)
// until resources are freed, across a restart of vk-cri.

// resizablePod is a Guaranteed busybox pod, limits cpu 100m and memory 64Mi.
func resizablePod(name string, policy ...v1.ContainerResizePolicy) *v1.Pod {
	c := busybox("a", "trap 'exit 0' TERM; sleep 3600 & wait")
	c.Resources = v1.ResourceRequirements{Limits: v1.ResourceList{
		v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("64Mi"),
	}}
	c.ResizePolicy = policy
	return basePod(name, c)
}

// resize patches the pod's resize subresource, as kubectl patch --subresource resize does.
func resize(ctx context.Context, ns, name, containerResources string) error {
	patch := fmt.Sprintf(`{"spec":{"containers":[{"name":"a","resources":%s}]}}`, containerResources)
	_, err := s.kube.CoreV1().Pods(ns).Patch(ctx, name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "resize")
	return err
}

func mustResize(t *testing.T, ns, name, containerResources string) {
	t.Helper()
	if err := resize(ctxFor(t, 30*time.Second), ns, name, containerResources); err != nil {
		t.Fatalf("resizing %s: %v", name, err)
	}
}

// cgroupValue reads one of the container's cgroup files from inside it: the cgroup v2 name
// when the container sees a unified hierarchy, else the v1 one (this machine's).
func cgroupValue(t *testing.T, ns, pod, v2, v1path string) string {
	t.Helper()
	script := fmt.Sprintf("if [ -e /sys/fs/cgroup/%s ]; then cat /sys/fs/cgroup/%s; else cat /sys/fs/cgroup/%s; fi", v2, v2, v1path)
	return strings.TrimSpace(mustKubectl(t, nil, "", "-n", ns, "exec", pod, "-c", "a", "--", "sh", "-c", script))
}

// cpuQuota is the container's CFS quota in µs per 100 ms period ("max" or -1: none).
func cpuQuota(t *testing.T, ns, pod string) string {
	v := cgroupValue(t, ns, pod, "cpu.max", "cpu/cpu.cfs_quota_us")
	return strings.Fields(v)[0]
}

func memoryLimit(t *testing.T, ns, pod string) string {
	return cgroupValue(t, ns, pod, "memory.max", "memory/memory.limit_in_bytes")
}

func hasCondition(p *v1.Pod, t v1.PodConditionType) *v1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// resizeDone: the status reports the resize of generation gen carried out.
func resizeDone(gen int64, cpu, mem string) func(*v1.Pod) bool {
	return func(p *v1.Pod) bool {
		if len(p.Status.ContainerStatuses) != 1 || p.Status.ObservedGeneration != gen || p.Generation != gen {
			return false
		}
		r := p.Status.ContainerStatuses[0].Resources
		return r != nil && r.Limits.Cpu().String() == cpu && r.Limits.Memory().String() == mem &&
			hasCondition(p, v1.PodResizeInProgress) == nil && hasCondition(p, v1.PodResizePending) == nil &&
			p.Status.ContainerStatuses[0].State.Running != nil
	}
}

// checkResizedStatus checks every resize field of the status against the kubelet's.
func checkResizedStatus(t *testing.T, p *v1.Pod, cpu, mem string) {
	t.Helper()
	want := v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse(mem)}
	cs := p.Status.ContainerStatuses[0]
	same := func(what string, got v1.ResourceList) {
		if len(got) != 2 || !got.Cpu().Equal(want[v1.ResourceCPU]) || !got.Memory().Equal(want[v1.ResourceMemory]) {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	same("containerStatuses[a].resources.limits", cs.Resources.Limits)
	same("containerStatuses[a].resources.requests", cs.Resources.Requests)
	same("containerStatuses[a].allocatedResources", cs.AllocatedResources)
	if p.Status.Resources == nil {
		t.Fatalf("status.resources missing")
	}
	same("status.resources.limits", p.Status.Resources.Limits)
	same("status.resources.requests", p.Status.Resources.Requests)
	same("status.allocatedResources", p.Status.AllocatedResources)
	for _, c := range p.Status.Conditions {
		if c.ObservedGeneration != p.Generation {
			t.Errorf("condition %s observedGeneration %d, want %d", c.Type, c.ObservedGeneration, p.Generation)
		}
	}
}

// resizeMessage is the kubelet's resize event message for container a.
func resizeMessage(prefix, cpu, mem string, gen int64) string {
	return fmt.Sprintf(`%s: {"containers":[{"name":"a","resources":{"limits":{"cpu":"%s","memory":"%s"},"requests":{"cpu":"%s","memory":"%s"}}}],"generation":%d}`,
		prefix, cpu, mem, cpu, mem, gen)
}

func exactEvent(t *testing.T, ns, pod, reason, message string) {
	t.Helper()
	e := waitEvent(t, ns, pod, reason, "", 30*time.Second)
	if e.Message != message {
		t.Errorf("%s event %q, want %q", reason, e.Message, message)
	}
}

// A cpu increase is applied to the running container: same container, restartCount 0, the new
// CFS quota in its cgroup, every status field updated, ResizeStarted then ResizeCompleted.
func TestResizeCPUIncreaseInPlace(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, resizablePod("cpu"))
	before := waitPod(t, ns, "cpu", 2*time.Minute, "running and ready", isRunningReady)
	if got := cpuQuota(t, ns, "cpu"); got != "10000" {
		t.Fatalf("cpu quota before the resize %s, want 10000", got)
	}
	checkResizedStatus(t, before, "100m", "64Mi")

	mustResize(t, ns, "cpu", `{"requests":{"cpu":"200m"},"limits":{"cpu":"200m"}}`)
	after := waitPod(t, ns, "cpu", time.Minute, "resize done", resizeDone(2, "200m", "64Mi"))
	checkResizedStatus(t, after, "200m", "64Mi")
	cs := after.Status.ContainerStatuses[0]
	if cs.RestartCount != 0 || cs.ContainerID != before.Status.ContainerStatuses[0].ContainerID {
		t.Errorf("container restarted: %s restartCount %d, was %s", cs.ContainerID, cs.RestartCount, before.Status.ContainerStatuses[0].ContainerID)
	}
	if got := cpuQuota(t, ns, "cpu"); got != "20000" {
		t.Errorf("cpu quota after the resize %s, want 20000", got)
	}
	exactEvent(t, ns, "cpu", "ResizeStarted", resizeMessage("Pod resize started", "200m", "64Mi", 2))
	exactEvent(t, ns, "cpu", "ResizeCompleted", resizeMessage("Pod resize completed", "200m", "64Mi", 2))
}

// A memory limit increase is applied in place too (resize policy NotRequired, the default).
func TestResizeMemoryLimitIncrease(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, resizablePod("mem"))
	before := waitPod(t, ns, "mem", 2*time.Minute, "running and ready", isRunningReady)
	if got := memoryLimit(t, ns, "mem"); got != fmt.Sprint(64<<20) {
		t.Fatalf("memory limit before the resize %s, want %d", got, 64<<20)
	}
	mustResize(t, ns, "mem", `{"requests":{"memory":"128Mi"},"limits":{"memory":"128Mi"}}`)
	after := waitPod(t, ns, "mem", time.Minute, "resize done", resizeDone(2, "100m", "128Mi"))
	checkResizedStatus(t, after, "100m", "128Mi")
	if cs := after.Status.ContainerStatuses[0]; cs.RestartCount != 0 || cs.ContainerID != before.Status.ContainerStatuses[0].ContainerID {
		t.Errorf("container restarted: restartCount %d", cs.RestartCount)
	}
	if got := memoryLimit(t, ns, "mem"); got != fmt.Sprint(128<<20) {
		t.Errorf("memory limit after the resize %s, want %d", got, 128<<20)
	}
	exactEvent(t, ns, "mem", "ResizeCompleted", resizeMessage("Pod resize completed", "100m", "128Mi", 2))
}

// A container whose resize policy for memory is RestartContainer is restarted with the new
// limit: Killing "Container a resize requires restart", restartCount 1, the new instance's
// cgroup has the new limit.
func TestResizeRestartContainerPolicy(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, resizablePod("restart", v1.ContainerResizePolicy{ResourceName: v1.ResourceMemory, RestartPolicy: v1.RestartContainer}))
	before := waitPod(t, ns, "restart", 2*time.Minute, "running and ready", isRunningReady)
	mustResize(t, ns, "restart", `{"requests":{"memory":"128Mi"},"limits":{"memory":"128Mi"}}`)
	after := waitPod(t, ns, "restart", time.Minute, "resize done", func(p *v1.Pod) bool {
		return resizeDone(2, "100m", "128Mi")(p) && p.Status.ContainerStatuses[0].RestartCount == 1
	})
	checkResizedStatus(t, after, "100m", "128Mi")
	if after.Status.ContainerStatuses[0].ContainerID == before.Status.ContainerStatuses[0].ContainerID {
		t.Errorf("same container ID after a RestartContainer resize")
	}
	exactEvent(t, ns, "restart", "Killing", "Container a resize requires restart")
	waitPod(t, ns, "restart", time.Minute, "ready again", isRunningReady)
	if got := memoryLimit(t, ns, "restart"); got != fmt.Sprint(128<<20) {
		t.Errorf("memory limit of the restarted container %s, want %d", got, 128<<20)
	}
}

// A memory limit below what the container uses is refused, as by the kubelet:
// PodResizeInProgress with reason Error, a ResizeError event, the old limit kept.
func TestResizeMemoryLimitBelowUsage(t *testing.T) {
	ns := newNamespace(t)
	pod := resizablePod("fill")
	pod.Spec.Containers[0].Command = []string{"sh", "-c", "head -c 40m /dev/zero > /dev/shm/fill; touch /tmp/filled; trap 'exit 0' TERM; sleep 3600 & wait"}
	createPod(t, ns, pod)
	waitPod(t, ns, "fill", 2*time.Minute, "running and ready", isRunningReady)
	mustKubectl(t, nil, "", "-n", ns, "exec", "fill", "--", "sh", "-c", "while [ ! -e /tmp/filled ]; do sleep 0.1; done")
	mustResize(t, ns, "fill", `{"requests":{"memory":"32Mi"},"limits":{"memory":"32Mi"}}`)
	p := waitPod(t, ns, "fill", time.Minute, "resize error", func(p *v1.Pod) bool {
		c := hasCondition(p, v1.PodResizeInProgress)
		return c != nil && c.Reason == v1.PodReasonError
	})
	c := hasCondition(p, v1.PodResizeInProgress)
	// With the pod cgroup's own limit, the pod's usage is checked first, as by the kubelet
	// (whose aggregate then names both: "cannot decrease memory limits: [pod ..., container ...]").
	if !strings.HasPrefix(c.Message, `cannot decrease memory limits: [attempting to set pod memory limit (33554432) below current usage (`) ||
		!strings.Contains(c.Message, `attempting to set container "a" memory limit (33554432) below current usage (`) {
		t.Errorf("PodResizeInProgress message %q", c.Message)
	}
	waitEvent(t, ns, "fill", "ResizeError", `Pod resize error: {"containers":[{"name":"a","resources":{"limits":{"cpu":"100m","memory":"32Mi"}`, 30*time.Second)
	if got := memoryLimit(t, ns, "fill"); got != fmt.Sprint(64<<20) {
		t.Errorf("memory limit %s, want the old %d", got, 64<<20)
	}
	if r := p.Status.ContainerStatuses[0].Resources; !r.Limits.Memory().Equal(resource.MustParse("64Mi")) {
		t.Errorf("status resources %v: must show the limit the container runs with", r.Limits)
	}
}

// A resize over the node's allocatable never reaches the node: the API server refuses it
// (PodResizeValidator), as for a kubelet node, which it can do only because the node reports
// its allocatable.
func TestResizeOverAllocatableRefused(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, resizablePod("huge"))
	waitPod(t, ns, "huge", 2*time.Minute, "running and ready", isRunningReady)
	err := resize(ctxFor(t, 30*time.Second), ns, "huge", `{"requests":{"cpu":"1000"},"limits":{"cpu":"1000"}}`)
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "node didn't have enough allocatable resources: cpu, requested: 1000000") {
		t.Fatalf("resize over allocatable: %v, want Forbidden by the node's allocatable", err)
	}
}

// A resize that does not fit next to the node's other pods waits: PodResizePending Deferred
// with the kubelet's message and a ResizeDeferred event, the container unchanged; a restart of
// vk-cri keeps it waiting (the allocation is kept under the root dir); once the other pod is
// gone the resize is carried out.
func TestResizeDeferredUntilResourcesFree(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, resizablePod("grow"))
	waitPod(t, ns, "grow", 2*time.Minute, "running and ready", isRunningReady)

	// Leave 200m of the node's cpu free, then ask for 400m more.
	free := freeCPU(t, ns)
	blocker := basePod("blocker", busybox("b", "trap 'exit 0' TERM; sleep 3600 & wait"))
	blocker.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceCPU: *resource.NewMilliQuantity(free-200, resource.DecimalSI)}
	blocker.Spec.NodeName, blocker.Spec.NodeSelector = nodeName, nil
	createPod(t, ns, blocker)
	waitPod(t, ns, "blocker", 2*time.Minute, "running and ready", isRunningReady)

	mustResize(t, ns, "grow", `{"requests":{"cpu":"500m"},"limits":{"cpu":"500m"}}`)
	pending := func(p *v1.Pod) bool {
		c := hasCondition(p, v1.PodResizePending)
		return c != nil && c.Reason == v1.PodReasonDeferred && c.ObservedGeneration == 2
	}
	p := waitPod(t, ns, "grow", time.Minute, "resize deferred", pending)
	c := hasCondition(p, v1.PodResizePending)
	if !strings.HasPrefix(c.Message, "Node didn't have enough resource: cpu, requested: 500, used: ") || !strings.Contains(c.Message, ", capacity: ") {
		t.Errorf("PodResizePending message %q", c.Message)
	}
	waitEvent(t, ns, "grow", "ResizeDeferred", `Pod resize OutOfcpu: {"containers":[{"name":"a","resources":{"limits":{"cpu":"500m","memory":"64Mi"},"requests":{"cpu":"500m","memory":"64Mi"}}}],"generation":2,"error":"Node didn't have enough resource: cpu, requested: 500, used: `, 30*time.Second)
	checkResizedStatus(t, p, "100m", "64Mi")
	if got := cpuQuota(t, ns, "grow"); got != "10000" {
		t.Errorf("cpu quota of a deferred resize %s, want the old 10000", got)
	}

	// vk-cri restarts: the allocation (100m) is remembered, the spec's 500m is not applied.
	restartNode(t, "")
	p = waitPod(t, ns, "grow", time.Minute, "still deferred after a restart of vk-cri", func(p *v1.Pod) bool {
		return pending(p) && isRunningReady(p)
	})
	if got := cpuQuota(t, ns, "grow"); got != "10000" {
		t.Errorf("cpu quota after a restart of vk-cri %s, want the old 10000", got)
	}
	if cs := p.Status.ContainerStatuses[0]; cs.RestartCount != 0 {
		t.Errorf("restartCount %d after a restart of vk-cri", cs.RestartCount)
	}

	if err := s.kube.CoreV1().Pods(ns).Delete(ctxFor(t, 30*time.Second), "blocker", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	after := waitPod(t, ns, "grow", 2*time.Minute, "resize done once resources are free", resizeDone(2, "500m", "64Mi"))
	checkResizedStatus(t, after, "500m", "64Mi")
	if got := cpuQuota(t, ns, "grow"); got != "50000" {
		t.Errorf("cpu quota after the resize %s, want 50000", got)
	}
	exactEvent(t, ns, "grow", "ResizeStarted", resizeMessage("Pod resize started", "500m", "64Mi", 2))
}

// freeCPU is the node's allocatable cpu (millicores) minus the requests of the pods on it that
// have not finished, once only the test's own pods are left there: the pods of earlier tests
// go with their namespaces, and their requests would be freed meanwhile.
func freeCPU(t *testing.T, ns string) int64 {
	t.Helper()
	var free int64
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		n, err := s.kube.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		pods, err := s.kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + nodeName})
		if err != nil {
			return false, nil
		}
		free = n.Status.Allocatable.Cpu().MilliValue()
		for _, p := range pods.Items {
			if p.DeletionTimestamp != nil || p.Namespace != ns {
				return false, nil
			}
			if p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
				continue
			}
			for _, c := range p.Spec.Containers {
				free -= c.Resources.Requests.Cpu().MilliValue()
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("pods of other tests still on %s", nodeName)
	}
	if free < 600 {
		t.Fatalf("only %dm cpu free on %s", free, nodeName)
	}
	return free
}

// An init container that is not a sidecar is resized in place while it runs (the node declares
// InPlacePodVerticalScalingInitContainers, as the kubelet does, so the API server lets it
// through): its cgroup gets the new quota, its status the new values, and the pod goes on.
func TestResizeInitContainerInPlace(t *testing.T) {
	ns := newNamespace(t)
	pod := resizablePod("init")
	init := busybox("init", "while [ ! -e /tmp/done ]; do sleep 0.2; done")
	init.Resources = pod.Spec.Containers[0].Resources
	pod.Spec.InitContainers = []v1.Container{init}
	createPod(t, ns, pod)
	waitPod(t, ns, "init", 2*time.Minute, "init container running", func(p *v1.Pod) bool {
		return len(p.Status.InitContainerStatuses) == 1 && p.Status.InitContainerStatuses[0].State.Running != nil
	})
	patch := `{"spec":{"initContainers":[{"name":"init","resources":{"requests":{"cpu":"200m"},"limits":{"cpu":"200m"}}}]}}`
	if _, err := s.kube.CoreV1().Pods(ns).Patch(ctxFor(t, 30*time.Second), "init", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "resize"); err != nil {
		t.Fatalf("resizing the init container: %v", err)
	}
	p := waitPod(t, ns, "init", time.Minute, "init container resized", func(p *v1.Pod) bool {
		st := p.Status.InitContainerStatuses[0]
		return p.Status.ObservedGeneration == 2 && st.State.Running != nil && st.Resources != nil && st.Resources.Limits.Cpu().String() == "200m"
	})
	if got := p.Status.InitContainerStatuses[0].AllocatedResources.Cpu().String(); got != "200m" {
		t.Errorf("init container allocatedResources cpu %s, want 200m", got)
	}
	script := "if [ -e /sys/fs/cgroup/cpu.max ]; then cat /sys/fs/cgroup/cpu.max; else cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us; fi"
	if got := strings.Fields(mustKubectl(t, nil, "", "-n", ns, "exec", "init", "-c", "init", "--", "sh", "-c", script))[0]; got != "20000" {
		t.Errorf("init container cpu quota %s, want 20000", got)
	}
	exactEvent(t, ns, "init", "ResizeStarted", `Pod resize started: {"initContainers":[{"name":"init","resources":{"limits":{"cpu":"200m","memory":"64Mi"},"requests":{"cpu":"200m","memory":"64Mi"}}}],"containers":[{"name":"a","resources":{"limits":{"cpu":"100m","memory":"64Mi"},"requests":{"cpu":"100m","memory":"64Mi"}}}],"generation":2}`)
	mustKubectl(t, nil, "", "-n", ns, "exec", "init", "-c", "init", "--", "touch", "/tmp/done")
	waitPod(t, ns, "init", time.Minute, "running and ready", isRunningReady)
}
