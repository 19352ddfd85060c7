package provider

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// res builds requirements from "cpu,memory" request and limit strings ("" leaves one out).
func res(reqCPU, reqMem, limCPU, limMem string) v1.ResourceRequirements {
	list := func(cpu, mem string) v1.ResourceList {
		l := v1.ResourceList{}
		if cpu != "" {
			l[v1.ResourceCPU] = resource.MustParse(cpu)
		}
		if mem != "" {
			l[v1.ResourceMemory] = resource.MustParse(mem)
		}
		if len(l) == 0 {
			return nil
		}
		return l
	}
	return v1.ResourceRequirements{Requests: list(reqCPU, reqMem), Limits: list(limCPU, limMem)}
}

func sized(c v1.Container, r v1.ResourceRequirements, policy ...v1.ContainerResizePolicy) v1.Container {
	c.Resources = r
	c.ResizePolicy = policy
	return c
}

func withActuated(rt *podRuntime, applied map[string]v1.ResourceRequirements) *podRuntime {
	rt.Actuated = applied
	return rt
}

// The resize part of computePodActions: a running container whose allocation differs from
// what was applied to it is resized in place, or restarted when its resize policy says so for
// a resource that changed; a container that does not run gets its resources when it starts.
func TestComputePodActionsResize(t *testing.T) {
	small, big := res("100m", "64Mi", "100m", "64Mi"), res("200m", "64Mi", "200m", "64Mi")
	moreMem := res("100m", "128Mi", "100m", "128Mi")
	a := sized(ctr("a"), big)
	aMemRestart := sized(ctr("a"), moreMem, v1.ContainerResizePolicy{ResourceName: v1.ResourceMemory, RestartPolicy: v1.RestartContainer})
	aCPURestartMemChange := sized(ctr("a"), moreMem, v1.ContainerResizePolicy{ResourceName: v1.ResourceCPU, RestartPolicy: v1.RestartContainer})
	side := sized(sidecarCtr("side"), big)
	sideRestart := sized(sidecarCtr("side"), moreMem, v1.ContainerResizePolicy{ResourceName: v1.ResourceMemory, RestartPolicy: v1.RestartContainer})
	b := ctr("b")
	s1 := sbs(sandbox("s1", 0, true))

	cases := []struct {
		name string
		pod  *v1.Pod
		rt   *podRuntime
		want podActions
	}{
		{
			name: "applied equals allocated: nothing to do",
			pod:  testPod(withContainers(a)),
			rt:   withActuated(rtOf(s1, running(a, "c-a", "s1")), map[string]v1.ResourceRequirements{"a": big}),
			want: podActions{SandboxID: "s1", InitToStart: -1},
		},
		{
			name: "cpu increase, default policy: resized in place",
			pod:  testPod(withContainers(a)),
			rt:   withActuated(rtOf(s1, running(a, "c-a", "s1")), map[string]v1.ResourceRequirements{"a": small}),
			want: podActions{SandboxID: "s1", InitToStart: -1, ContainersToResize: []resizeTarget{{ID: "c-a", Name: "a", Index: 0, Desired: big, Current: small}}},
		},
		{
			name: "memory change with RestartContainer for memory: restarted with a resize message",
			pod:  testPod(withContainers(aMemRestart)),
			rt:   withActuated(rtOf(s1, running(aMemRestart, "c-a", "s1")), map[string]v1.ResourceRequirements{"a": small}),
			want: podActions{SandboxID: "s1", InitToStart: -1, ContainersToStart: []int{0},
				ContainersToKill: []killTarget{{ID: "c-a", Name: "a", Reason: "resize", Message: "Container a resize requires restart"}}},
		},
		{
			name: "memory change with RestartContainer only for cpu: in place",
			pod:  testPod(withContainers(aCPURestartMemChange)),
			rt:   withActuated(rtOf(s1, running(aCPURestartMemChange, "c-a", "s1")), map[string]v1.ResourceRequirements{"a": small}),
			want: podActions{SandboxID: "s1", InitToStart: -1, ContainersToResize: []resizeTarget{{ID: "c-a", Name: "a", Desired: moreMem, Current: small}}},
		},
		{
			name: "no record of what was applied: updated (idempotent), as the kubelet does",
			pod:  testPod(withContainers(a)),
			rt:   rtOf(s1, running(a, "c-a", "s1")),
			want: podActions{SandboxID: "s1", InitToStart: -1, ContainersToResize: []resizeTarget{{ID: "c-a", Name: "a", Desired: big}}},
		},
		{
			name: "a container without resources and no record: nothing differs",
			pod:  testPod(withContainers(b)),
			rt:   rtOf(s1, running(b, "c-b", "s1")),
			want: podActions{SandboxID: "s1", InitToStart: -1},
		},
		{
			name: "an exited container is not resized: it restarts with its allocation",
			pod:  testPod(withContainers(a)),
			rt:   withActuated(rtOf(s1, exited(a, "c-a", "s1", 1)), map[string]v1.ResourceRequirements{"a": small}),
			want: podActions{SandboxID: "s1", InitToStart: -1, ContainersToStart: []int{0}},
		},
		{
			name: "image change and resize together: restarted for the image",
			pod:  testPod(withContainers(sized(ctrImage("a", "a:2.0"), big))),
			rt:   withActuated(rtOf(s1, running(a, "c-a", "s1")), map[string]v1.ResourceRequirements{"a": small}),
			want: podActions{SandboxID: "s1", InitToStart: -1, ContainersToStart: []int{0},
				ContainersToKill: []killTarget{{ID: "c-a", Name: "a", Reason: "definition changed"}}},
		},
		{
			name: "running init container (not a sidecar) resized in place",
			pod:  testPod(withInit(sized(ctr("i1"), big)), withContainers(b)),
			rt:   withActuated(rtOf(s1, running(sized(ctr("i1"), big), "c-i1", "s1")), map[string]v1.ResourceRequirements{"i1": small}),
			want: podActions{SandboxID: "s1", InitToStart: -1, ContainersToResize: []resizeTarget{{ID: "c-i1", Name: "i1", Init: true, Desired: big, Current: small}}},
		},
		{
			name: "sidecar resized in place while the next init container starts",
			pod:  testPod(withInit(side, ctr("i2")), withContainers(b)),
			rt:   withActuated(rtOf(s1, running(side, "c-side", "s1")), map[string]v1.ResourceRequirements{"side": small}),
			want: podActions{SandboxID: "s1", InitToStart: 1, ContainersToResize: []resizeTarget{{ID: "c-side", Name: "side", Init: true, Desired: big, Current: small}}},
		},
		{
			name: "sidecar restarted by its resize policy during initialisation",
			pod:  testPod(withInit(sideRestart, ctr("i2")), withContainers(b)),
			rt:   withActuated(rtOf(s1, running(sideRestart, "c-side", "s1")), map[string]v1.ResourceRequirements{"side": small}),
			want: podActions{SandboxID: "s1", InitToStart: 0,
				ContainersToKill: []killTarget{{ID: "c-side", Name: "side", Reason: "resize", Message: "Container side resize requires restart"}}},
		},
		{
			name: "running sidecar resized in place",
			pod:  testPod(withInit(side), withContainers(b)),
			rt:   withActuated(rtOf(s1, running(side, "c-side", "s1"), running(b, "c-b", "s1")), map[string]v1.ResourceRequirements{"side": small}),
			want: podActions{SandboxID: "s1", InitToStart: -1, ContainersToResize: []resizeTarget{{ID: "c-side", Name: "side", Init: true, Index: 0, Desired: big, Current: small}}},
		},
		{
			name: "running sidecar restarted by its resize policy",
			pod:  testPod(withInit(sideRestart), withContainers(b)),
			rt:   withActuated(rtOf(s1, running(sideRestart, "c-side", "s1"), running(b, "c-b", "s1")), map[string]v1.ResourceRequirements{"side": small}),
			want: podActions{SandboxID: "s1", InitToStart: -1, SidecarsToStart: []int{0},
				ContainersToKill: []killTarget{{ID: "c-side", Name: "side", Reason: "resize", Message: "Container side resize requires restart"}}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := computePodActions(tc.pod, tc.rt, nil, nil)
			if diff := cmp.Diff(tc.want, got, actionsCmpOpts...); diff != "" {
				t.Errorf("actions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAdmitResize(t *testing.T) {
	allocatable := v1.ResourceList{v1.ResourceCPU: resource.MustParse("2"), v1.ResourceMemory: resource.MustParse("1Gi")}
	podWith := func(name string, r v1.ResourceRequirements) *v1.Pod {
		return testPod(withContainers(sized(ctr(name), r)))
	}
	cases := []struct {
		name   string
		pod    *v1.Pod
		others []*v1.Pod
		want   resizeVerdict
	}{
		{
			name: "fits alone",
			pod:  podWith("a", res("1500m", "512Mi", "", "")),
			want: resizeVerdict{Fit: true},
		},
		{
			name:   "cpu over what the others leave: Deferred with the scheduler's message",
			pod:    podWith("a", res("600m", "", "600m", "")),
			others: []*v1.Pod{podWith("b", res("1500m", "", "", "")), podWith("c", res("300m", "", "", ""))},
			want: resizeVerdict{Reason: v1.PodReasonDeferred, Refusal: "OutOfcpu",
				Message: "Node didn't have enough resource: cpu, requested: 600, used: 1800, capacity: 2000"},
		},
		{
			name:   "memory over what the others leave, in bytes",
			pod:    podWith("a", res("", "600Mi", "", "")),
			others: []*v1.Pod{podWith("b", res("", "512Mi", "", ""))},
			want: resizeVerdict{Reason: v1.PodReasonDeferred, Refusal: "OutOfmemory",
				Message: "Node didn't have enough resource: memory, requested: 629145600, used: 536870912, capacity: 1073741824"},
		},
		{
			name:   "exactly what is left fits",
			pod:    podWith("a", res("500m", "", "", "")),
			others: []*v1.Pod{podWith("b", res("1500m", "", "", ""))},
			want:   resizeVerdict{Fit: true},
		},
		{
			name:   "no requests: nothing to check",
			pod:    podWith("a", v1.ResourceRequirements{}),
			others: []*v1.Pod{podWith("b", res("3", "", "", ""))},
			want:   resizeVerdict{Fit: true},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, admitResize(tc.pod, tc.others, allocatable)); diff != "" {
				t.Errorf("verdict (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWithAllocation(t *testing.T) {
	small, big := res("100m", "64Mi", "100m", "64Mi"), res("200m", "64Mi", "200m", "64Mi")
	pod := testPod(withContainers(sized(ctr("a"), big), ctr("b")))
	if got := withAllocation(pod, specAllocation(pod)); got != pod {
		t.Errorf("an allocation equal to the spec must not copy the pod")
	}
	got := withAllocation(pod, map[string]v1.ResourceRequirements{"a": small})
	if !got.Spec.Containers[0].Resources.Limits.Cpu().Equal(resource.MustParse("100m")) {
		t.Errorf("allocated pod: %v", got.Spec.Containers[0].Resources)
	}
	if !pod.Spec.Containers[0].Resources.Limits.Cpu().Equal(resource.MustParse("200m")) {
		t.Errorf("the spec was changed")
	}
	if !allocationDiffers(pod, map[string]v1.ResourceRequirements{"a": small}) || allocationDiffers(pod, specAllocation(pod)) {
		t.Errorf("allocationDiffers")
	}
}

func TestResizeConditions(t *testing.T) {
	t0 := testT0
	var r resizeConditions
	if !r.setPending(v1.PodReasonDeferred, "no cpu", 2, t0) {
		t.Errorf("a first pending condition is a change")
	}
	if r.setPending(v1.PodReasonDeferred, "no cpu", 2, t0.Add(time.Second)) {
		t.Errorf("same reason and generation: no change (no second event)")
	}
	if !r.Pending.LastProbeTime.Time.Equal(t0) {
		t.Errorf("an unchanged condition keeps its probe time (no status write for nothing)")
	}
	if !r.setPending(v1.PodReasonDeferred, "no cpu", 3, t0.Add(2*time.Second)) {
		t.Errorf("a new generation is a change")
	}
	if !r.Pending.LastTransitionTime.Time.Equal(t0) {
		t.Errorf("same reason keeps the transition time")
	}

	gen, changed := r.setInProgress("", "", 3, t0)
	if gen != 3 || !changed {
		t.Errorf("setInProgress: %d %v", gen, changed)
	}
	gen, changed = r.setInProgress(v1.PodReasonError, "boom", 4, t0.Add(time.Second))
	if gen != 3 || !changed || r.InProgress.Reason != v1.PodReasonError {
		t.Errorf("an error keeps the condition's generation: %d %v %+v", gen, changed, r.InProgress)
	}
	if _, changed = r.setInProgress("", "", 5, t0.Add(2*time.Second)); changed || r.InProgress.Message != "boom" {
		t.Errorf("a plain set keeps the error: %+v", r.InProgress)
	}
	want := []v1.PodConditionType{v1.PodResizePending, v1.PodResizeInProgress}
	var got []v1.PodConditionType
	for _, c := range r.list() {
		got = append(got, c.Type)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	if back := backfillResizeConditions(r.list()); !cmp.Equal(back.list(), r.list()) {
		t.Errorf("backfill lost conditions")
	}
	if gen, cleared := r.clearInProgress(); !cleared || gen != 3 {
		t.Errorf("clearInProgress: %d %v", gen, cleared)
	}
	if _, cleared := r.clearInProgress(); cleared {
		t.Errorf("nothing to clear twice")
	}
}

func TestResizeEventMessage(t *testing.T) {
	pod := testPod(withInit(sized(sidecarCtr("side"), res("", "", "", ""))), withContainers(sized(ctr("a"), res("200m", "64Mi", "200m", "64Mi"))))
	want := `Pod resize started: {"initContainers":[{"name":"side","resources":{}}],"containers":[{"name":"a","resources":{"limits":{"cpu":"200m","memory":"64Mi"},"requests":{"cpu":"200m","memory":"64Mi"}}}],"generation":2}`
	if got := resizeEventMessage("Pod resize started", pod, 2, ""); got != want {
		t.Errorf("message\n got %s\nwant %s", got, want)
	}
	want = `Pod resize OutOfcpu: {"containers":[{"name":"a","resources":{"limits":{"cpu":"200m","memory":"64Mi"},"requests":{"cpu":"200m","memory":"64Mi"}}}],"generation":2,"error":"no cpu"}`
	pod.Spec.InitContainers = nil
	if got := resizeEventMessage("Pod resize OutOfcpu", pod, 2, "no cpu"); got != want {
		t.Errorf("message\n got %s\nwant %s", got, want)
	}
}

func TestResizeInProgress(t *testing.T) {
	small, big := res("100m", "64Mi", "100m", "64Mi"), res("200m", "64Mi", "200m", "64Mi")
	a := sized(ctr("a"), big)
	s1 := sbs(sandbox("s1", 0, true))
	if !resizeInProgress(testPod(withContainers(a)), withActuated(rtOf(s1, running(a, "c-a", "s1")), map[string]v1.ResourceRequirements{"a": small})) {
		t.Errorf("running with other resources than allocated: in progress")
	}
	if resizeInProgress(testPod(withContainers(a)), withActuated(rtOf(s1, running(a, "c-a", "s1")), map[string]v1.ResourceRequirements{"a": big})) {
		t.Errorf("running as allocated: done")
	}
	if resizeInProgress(testPod(withContainers(a)), withActuated(rtOf(s1, exited(a, "c-a", "s1", 0)), map[string]v1.ResourceRequirements{"a": small})) {
		t.Errorf("a container that does not run needs no resize")
	}
	i1 := sized(ctr("i1"), big)
	if resizeInProgress(testPod(withInit(i1), withContainers(ctr("b"))), withActuated(rtOf(s1, running(i1, "c-i1", "s1")), map[string]v1.ResourceRequirements{"i1": small})) {
		t.Errorf("an init container that is not a sidecar is left out, as by the kubelet")
	}
	side := sized(sidecarCtr("side"), big)
	if !resizeInProgress(testPod(withInit(side), withContainers(ctr("b"))), withActuated(rtOf(s1, running(side, "c-side", "s1")), map[string]v1.ResourceRequirements{"side": small})) {
		t.Errorf("a sidecar counts")
	}
}

// During a resize the status reports what the container runs with: the runtime's cgroup
// values, completed by what vk-cri applied (not the new allocation); with no report from the
// runtime, what vk-cri applied altogether.
func TestContainerStatusResourcesDuringResize(t *testing.T) {
	q := func(s string) resource.Quantity { return resource.MustParse(s) }
	allocated := sized(ctr("a"), res("200m", "128Mi", "200m", "128Mi"))
	applied := res("100m", "64Mi", "100m", "64Mi")
	run := &containerState{ID: "c1", State: runtimeapi.ContainerState_CONTAINER_RUNNING}
	got := containerStatusResources(&allocated, run, "containerd://c1", nil, applied)
	if !got.Limits.Cpu().Equal(q("100m")) || !got.Requests.Memory().Equal(q("64Mi")) || !got.Limits.Memory().Equal(q("64Mi")) {
		t.Errorf("no runtime report: want what was applied, got %v", got)
	}
	run.Resources = &runtimeapi.LinuxContainerResources{CpuShares: 102, CpuPeriod: 100000, CpuQuota: 10000, MemoryLimitInBytes: 64 << 20}
	got = containerStatusResources(&allocated, run, "containerd://c1", nil, applied)
	if !got.Limits.Cpu().Equal(q("100m")) || !got.Requests.Cpu().Equal(q("100m")) || !got.Requests.Memory().Equal(q("64Mi")) {
		t.Errorf("runtime report: want its values and the applied memory request, got %v", got)
	}
}

// A running pod's status.resources come from the pod cgroup as configured for what its
// containers run with; allocatedResources from the allocation.
func TestPodStatusResourcesDuringResize(t *testing.T) {
	q := func(s string) resource.Quantity { return resource.MustParse(s) }
	pod := testPod(withContainers(sized(ctr("a"), res("200m", "64Mi", "200m", "64Mi"))))
	applied := withAllocation(pod, map[string]v1.ResourceRequirements{"a": res("100m", "64Mi", "100m", "64Mi")})
	old := v1.PodStatus{Phase: v1.PodRunning}
	got, allocated := podStatusResources(pod, applied, old, podCgroupModel{PageSize: 4096}, true)
	if !got.Limits.Cpu().Equal(q("100m")) || !got.Requests.Cpu().Equal(q("100m")) {
		t.Errorf("resources during a resize: want the applied cpu, got %v", got)
	}
	if !allocated.Cpu().Equal(q("200m")) {
		t.Errorf("allocatedResources: want the allocation, got %v", allocated)
	}
}

// The store outlives vk-cri: what one process wrote, the next one reads; pods gone meanwhile
// are forgotten.
func TestAllocationStorePersists(t *testing.T) {
	path := filepath.Join(t.TempDir(), allocationFile)
	s := newAllocationStore(path)
	if err := s.load(); err != nil {
		t.Fatalf("a missing file is an empty store: %v", err)
	}
	alloc := map[string]v1.ResourceRequirements{"a": res("100m", "64Mi", "100m", "64Mi")}
	if err := s.setAllocated("u1", alloc); err != nil {
		t.Fatal(err)
	}
	if err := s.setActuated("u1", "a", res("50m", "", "", "")); err != nil {
		t.Fatal(err)
	}
	if err := s.setAllocated("u2", alloc); err != nil {
		t.Fatal(err)
	}

	next := newAllocationStore(path)
	if err := next.load(); err != nil {
		t.Fatal(err)
	}
	got, ok := next.allocated("u1")
	if !ok || !cmp.Equal(got, alloc, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })) {
		t.Errorf("allocated after reload: %v %v", got, ok)
	}
	if a := next.actuated("u1")["a"]; !a.Requests.Cpu().Equal(resource.MustParse("50m")) {
		t.Errorf("actuated after reload: %v", a)
	}
	if err := next.keepOnly(map[types.UID]bool{"u1": true}); err != nil {
		t.Fatal(err)
	}
	if err := next.remove("u1"); err != nil {
		t.Fatal(err)
	}
	last := newAllocationStore(path)
	if err := last.load(); err != nil {
		t.Fatal(err)
	}
	if _, ok := last.allocated("u1"); ok {
		t.Errorf("a removed pod is forgotten")
	}
	if _, ok := last.allocated("u2"); ok {
		t.Errorf("keepOnly forgets the others")
	}

	if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := newAllocationStore(path).load(); err == nil {
		t.Errorf("a damaged store must not be taken for an empty one")
	}
}
