package provider

import (
	"encoding/json"
	"testing"

	"github.com/vk-cri/vk-cri/cm"
	"github.com/vk-cri/vk-cri/provider/translate"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// rl builds a resource list from "name=quantity" pairs.
func rl(pairs ...string) v1.ResourceList {
	if len(pairs) == 0 {
		return nil
	}
	out := v1.ResourceList{}
	for i := 0; i < len(pairs); i += 2 {
		out[v1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return out
}

func withResources(c v1.Container, requests, limits v1.ResourceList) v1.Container {
	c.Resources = v1.ResourceRequirements{Requests: requests, Limits: limits}
	return c
}

// jsonOf renders a value as the API would write it, so that tests compare what clients see
// (quantities in canonical form, empty maps left out).
func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// criResources is what containerd reports for a container vk-cri configured with these values.
func criResources(shares, quota, memory int64) *runtimeapi.LinuxContainerResources {
	return &runtimeapi.LinuxContainerResources{CpuShares: shares, CpuPeriod: translate.CFSPeriod, CpuQuota: quota, MemoryLimitInBytes: memory}
}

func TestContainerStatusResources(t *testing.T) {
	limited := withResources(ctr("main"), rl("cpu", "200m", "memory", "64Mi"), rl("cpu", "200m", "memory", "64Mi"))
	requestsOnly := withResources(ctr("side"), rl("cpu", "50m", "memory", "32Mi"), nil)
	cpuLimitOnly := withResources(ctr("c"), rl("cpu", "100m"), rl("cpu", "100m"))
	tiny := withResources(ctr("t"), rl("cpu", "1m"), rl("cpu", "5m"))
	withReport := func(c *containerState, r *runtimeapi.LinuxContainerResources) *containerState {
		c.Resources = r
		return c
	}
	cases := []struct {
		name string
		spec v1.Container
		cur  *containerState
		old  *v1.ContainerStatus
		want string
	}{
		{
			name: "no resources: an empty object",
			spec: ctr("plain"),
			cur:  withReport(running(ctr("plain"), "c1", "s1"), criResources(2, 0, 0)),
			want: `{}`,
		},
		{
			name: "exited: the spec's requests and limits, whatever the runtime reports",
			spec: limited,
			cur:  withReport(exited(limited, "c1", "s1", 0), criResources(999, 99000, 1)),
			want: `{"limits":{"cpu":"200m","memory":"64Mi"},"requests":{"cpu":"200m","memory":"64Mi"}}`,
		},
		{
			name: "running: the runtime's applied values, memory request from the spec",
			spec: limited,
			cur:  withReport(running(limited, "c1", "s1"), criResources(204, 20000, 64<<20)),
			want: `{"limits":{"cpu":"200m","memory":"64Mi"},"requests":{"cpu":"200m","memory":"64Mi"}}`,
		},
		{
			name: "running with requests only: limits stay absent although the runtime reports a period",
			spec: requestsOnly,
			cur:  withReport(running(requestsOnly, "c1", "s1"), criResources(51, 0, 0)),
			want: `{"requests":{"cpu":"50m","memory":"32Mi"}}`,
		},
		{
			name: "running, cpu limit only: no memory limit appears",
			spec: cpuLimitOnly,
			cur:  withReport(running(cpuLimitOnly, "c1", "s1"), criResources(102, 10000, 0)),
			want: `{"limits":{"cpu":"100m"},"requests":{"cpu":"100m"}}`,
		},
		{
			name: "running, nothing reported: the spec's values",
			spec: limited,
			cur:  running(limited, "c1", "s1"),
			want: `{"limits":{"cpu":"200m","memory":"64Mi"},"requests":{"cpu":"200m","memory":"64Mi"}}`,
		},
		{
			name: "running, values the runtime cannot express (quota and shares floors): the spec's",
			spec: tiny,
			cur:  withReport(running(tiny, "c1", "s1"), criResources(2, 1000, 0)),
			want: `{"limits":{"cpu":"5m"},"requests":{"cpu":"1m"}}`,
		},
		{
			name: "running, the runtime reports a different limit: the applied one",
			spec: limited,
			cur:  withReport(running(limited, "c1", "s1"), criResources(204, 30000, 128<<20)),
			want: `{"limits":{"cpu":"300m","memory":"128Mi"},"requests":{"cpu":"200m","memory":"64Mi"}}`,
		},
		{
			name: "running, memory limit not reported: the previous status's value for the same instance",
			spec: limited,
			cur:  withReport(running(limited, "c1", "s1"), criResources(204, 20000, 0)),
			old: &v1.ContainerStatus{ContainerID: "containerd://c1", State: v1.ContainerState{Running: &v1.ContainerStateRunning{}},
				Resources: &v1.ResourceRequirements{Limits: rl("memory", "48Mi")}},
			want: `{"limits":{"cpu":"200m","memory":"48Mi"},"requests":{"cpu":"200m","memory":"64Mi"}}`,
		},
		{
			name: "running, memory limit not reported, previous status of another instance: the spec's",
			spec: limited,
			cur:  withReport(running(limited, "c1", "s1"), criResources(204, 20000, 0)),
			old: &v1.ContainerStatus{ContainerID: "containerd://c0", State: v1.ContainerState{Running: &v1.ContainerStateRunning{}},
				Resources: &v1.ResourceRequirements{Limits: rl("memory", "48Mi")}},
			want: `{"limits":{"cpu":"200m","memory":"64Mi"},"requests":{"cpu":"200m","memory":"64Mi"}}`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := containerStatusResources(&tc.spec, tc.cur, "containerd://"+tc.cur.ID, tc.old, tc.spec.Resources)
			if diff := cmp.Diff(tc.want, jsonOf(t, got)); diff != "" {
				t.Errorf("resources (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAllocatedContainerResources(t *testing.T) {
	if got := allocatedContainerResources(&v1.Container{}); got != nil {
		t.Errorf("no requests: %v, want nil", got)
	}
	c := withResources(ctr("c"), rl("cpu", "10m"), rl("memory", "16Mi"))
	if diff := cmp.Diff(`{"cpu":"10m"}`, jsonOf(t, allocatedContainerResources(&c))); diff != "" {
		t.Errorf("requests only, limits ignored (-want +got):\n%s", diff)
	}
}

func TestVolumeMountStatuses(t *testing.T) {
	ifPossible, enabled := v1.RecursiveReadOnlyIfPossible, v1.RecursiveReadOnlyEnabled
	hostToContainer := v1.MountPropagationHostToContainer
	spec := v1.Container{VolumeMounts: []v1.VolumeMount{
		{Name: "data", MountPath: "/data"},
		{Name: "data", MountPath: "/ro", ReadOnly: true, SubPath: "x"},
		{Name: "kube-api-access-abcde", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true},
		{Name: "rro", MountPath: "/rro", ReadOnly: true, RecursiveReadOnly: &ifPossible},
		{Name: "rro-on", MountPath: "/rro-on", ReadOnly: true, RecursiveReadOnly: &enabled},
		{Name: "rro-prop", MountPath: "/rro-prop", ReadOnly: true, RecursiveReadOnly: &ifPossible, MountPropagation: &hostToContainer},
	}}
	cases := []struct {
		name     string
		supports bool
		want     string
	}{
		{
			name: "runtime without recursive read-only mounts: every read-only mount Disabled",
			want: `[{"name":"data","mountPath":"/data"},` +
				`{"name":"data","mountPath":"/ro","readOnly":true,"recursiveReadOnly":"Disabled"},` +
				`{"name":"kube-api-access-abcde","mountPath":"/var/run/secrets/kubernetes.io/serviceaccount","readOnly":true,"recursiveReadOnly":"Disabled"},` +
				`{"name":"rro","mountPath":"/rro","readOnly":true,"recursiveReadOnly":"Disabled"},` +
				`{"name":"rro-on","mountPath":"/rro-on","readOnly":true,"recursiveReadOnly":"Disabled"},` +
				`{"name":"rro-prop","mountPath":"/rro-prop","readOnly":true,"recursiveReadOnly":"Disabled"}]`,
		},
		{
			name:     "runtime with them: Enabled where asked for and possible",
			supports: true,
			want: `[{"name":"data","mountPath":"/data"},` +
				`{"name":"data","mountPath":"/ro","readOnly":true,"recursiveReadOnly":"Disabled"},` +
				`{"name":"kube-api-access-abcde","mountPath":"/var/run/secrets/kubernetes.io/serviceaccount","readOnly":true,"recursiveReadOnly":"Disabled"},` +
				`{"name":"rro","mountPath":"/rro","readOnly":true,"recursiveReadOnly":"Enabled"},` +
				`{"name":"rro-on","mountPath":"/rro-on","readOnly":true,"recursiveReadOnly":"Enabled"},` +
				`{"name":"rro-prop","mountPath":"/rro-prop","readOnly":true,"recursiveReadOnly":"Disabled"}]`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, jsonOf(t, volumeMountStatuses(&spec, tc.supports))); diff != "" {
				t.Errorf("volumeMounts (-want +got):\n%s", diff)
			}
		})
	}
	if got := volumeMountStatuses(&v1.Container{}, false); got != nil {
		t.Errorf("no mounts: %v, want nil", got)
	}
}

func TestPodStatusResources(t *testing.T) {
	v1Host := podCgroupModel{PageSize: 4096}
	v2Host := podCgroupModel{V2: true, PageSize: 4096}
	// The pod the kubelet's status was diffed on: an init container, a sidecar with requests, a
	// container with limits and one without resources.
	full := testPod(
		withInit(ctr("init"), withResources(sidecarCtr("side"), rl("cpu", "50m", "memory", "32Mi"), nil)),
		withContainers(withResources(ctr("main"), rl("cpu", "200m", "memory", "64Mi"), rl("cpu", "200m", "memory", "64Mi")), ctr("plain")),
	)
	guaranteed := testPod(withContainers(withResources(ctr("c"), rl("cpu", "100m", "memory", "100M"), rl("cpu", "100m", "memory", "100M"))))
	bestEffort := testPod(withContainers(ctr("c")))
	requests := testPod(withContainers(
		withResources(ctr("c"), rl("cpu", "10m"), nil),
		withResources(ctr("d"), rl("memory", "16Mi", "ephemeral-storage", "1Gi"), rl("memory", "16Mi")),
	))
	pending := v1.PodStatus{Phase: v1.PodPending}
	runningSince := func(res *v1.ResourceRequirements) v1.PodStatus {
		return v1.PodStatus{Phase: v1.PodRunning, Resources: res}
	}
	cases := []struct {
		name          string
		pod           *v1.Pod
		old           v1.PodStatus
		model         podCgroupModel
		absent        bool
		want          string
		wantAllocated string
	}{
		{
			name: "before running: aggregate requests (init and sidecar rules) and limits",
			pod:  full, old: pending, model: v1Host,
			want:          `{"limits":{"cpu":"200m","memory":"64Mi"},"requests":{"cpu":"250m","memory":"96Mi"}}`,
			wantAllocated: `{"cpu":"250m","memory":"96Mi"}`,
		},
		{
			name: "running, cgroup v1: no memory limit on a Burstable pod's cgroup reads as the largest value; the cpu limit stays",
			pod:  full, old: runningSince(&v1.ResourceRequirements{Limits: rl("cpu", "200m", "memory", "64Mi")}), model: v1Host,
			want:          `{"limits":{"cpu":"200m","memory":"9007199254740988Ki"},"requests":{"cpu":"250m","memory":"96Mi"}}`,
			wantAllocated: `{"cpu":"250m","memory":"96Mi"}`,
		},
		{
			// cpu.weight is coarser than cpu.shares: 250m reads back as 232m, which the kubelet
			// keeps only when it equals the pod-level request gone through the weight.
			name: "running, cgroup v2: the previous limits stay, the cpu request is the weight's",
			pod:  full, old: runningSince(&v1.ResourceRequirements{Limits: rl("cpu", "200m", "memory", "64Mi")}), model: v2Host,
			want:          `{"limits":{"cpu":"200m","memory":"64Mi"},"requests":{"cpu":"232m","memory":"96Mi"}}`,
			wantAllocated: `{"cpu":"250m","memory":"96Mi"}`,
		},
		{
			name: "Guaranteed before running: the spec's values",
			pod:  guaranteed, old: pending, model: v1Host,
			want:          `{"limits":{"cpu":"100m","memory":"100M"},"requests":{"cpu":"100m","memory":"100M"}}`,
			wantAllocated: `{"cpu":"100m","memory":"100M"}`,
		},
		{
			name: "Guaranteed running: the memory limit as the kernel keeps it (whole pages)",
			pod:  guaranteed, old: runningSince(nil), model: v1Host,
			want:          `{"limits":{"cpu":"100m","memory":"97656Ki"},"requests":{"cpu":"100m","memory":"100M"}}`,
			wantAllocated: `{"cpu":"100m","memory":"100M"}`,
		},
		{
			name: "BestEffort before running: empty",
			pod:  bestEffort, old: pending, model: v1Host,
			want: `{}`, wantAllocated: `null`,
		},
		{
			name: "BestEffort running, cgroup v1: only the unlimited memory",
			pod:  bestEffort, old: runningSince(&v1.ResourceRequirements{}), model: v1Host,
			want: `{"limits":{"memory":"9007199254740988Ki"}}`, wantAllocated: `null`,
		},
		{
			name: "BestEffort running, cgroup v2: empty",
			pod:  bestEffort, old: runningSince(&v1.ResourceRequirements{}), model: v2Host,
			want: `{}`, wantAllocated: `null`,
		},
		{
			name: "requests before running: every requested resource, memory limits summed",
			pod:  requests, old: pending, model: v1Host,
			want:          `{"limits":{"memory":"16Mi"},"requests":{"cpu":"10m","ephemeral-storage":"1Gi","memory":"16Mi"}}`,
			wantAllocated: `{"cpu":"10m","ephemeral-storage":"1Gi","memory":"16Mi"}`,
		},
		{
			name: "requests running: cpu from the shares, memory request, no ephemeral storage",
			pod:  requests, old: runningSince(&v1.ResourceRequirements{Limits: rl("memory", "16Mi")}), model: v1Host,
			want:          `{"limits":{"memory":"9007199254740988Ki"},"requests":{"cpu":"10m","memory":"16Mi"}}`,
			wantAllocated: `{"cpu":"10m","ephemeral-storage":"1Gi","memory":"16Mi"}`,
		},
		{
			name: "running, cgroup gone (pod torn down): the previous values stay",
			pod:  full, old: runningSince(&v1.ResourceRequirements{Limits: rl("cpu", "200m", "memory", "64Mi"), Requests: rl("cpu", "250m")}), model: v1Host, absent: true,
			want:          `{"limits":{"cpu":"200m","memory":"64Mi"},"requests":{"cpu":"250m","memory":"96Mi"}}`,
			wantAllocated: `{"cpu":"250m","memory":"96Mi"}`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, allocated := podStatusResources(tc.pod, tc.pod, tc.old, tc.model, !tc.absent)
			if diff := cmp.Diff(tc.want, jsonOf(t, res)); diff != "" {
				t.Errorf("resources (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantAllocated, jsonOf(t, allocated)); diff != "" {
				t.Errorf("allocatedResources (-want +got):\n%s", diff)
			}
		})
	}
}

// The container statuses of the pod the kubelet's status was diffed on, as generatePodStatus
// writes them once everything runs.
func TestGeneratePodStatusResourcesAndMounts(t *testing.T) {
	tokenMount := v1.VolumeMount{Name: "kube-api-access-x7k2p", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}
	withMounts := func(c v1.Container, m ...v1.VolumeMount) v1.Container {
		c.VolumeMounts = append(m, tokenMount)
		return c
	}
	initC := withMounts(ctr("init"))
	side := withMounts(withResources(sidecarCtr("side"), rl("cpu", "50m", "memory", "32Mi"), nil))
	main := withMounts(withResources(ctr("main"), rl("cpu", "200m", "memory", "64Mi"), rl("cpu", "200m", "memory", "64Mi")),
		v1.VolumeMount{Name: "data", MountPath: "/data"}, v1.VolumeMount{Name: "data", MountPath: "/ro", ReadOnly: true})
	plain := withMounts(ctr("plain"))
	waiting := withMounts(ctr("waiting"))
	pod := testPod(withInit(initC, side), withContainers(main, plain, waiting))
	pod.Status.Phase = v1.PodPending
	rt := rtOf(sbs(sandbox("s1", 0, true)),
		exited(initC, "c-init", "s1", 0),
		running(side, "c-side", "s1"),
		running(main, "c-main", "s1"),
		running(plain, "c-plain", "s1"),
	)
	st := generatePodStatus(statusIn(pod, rt))
	type shape struct {
		Name               string
		Resources          *v1.ResourceRequirements `json:",omitempty"`
		AllocatedResources v1.ResourceList          `json:",omitempty"`
		VolumeMounts       []v1.VolumeMountStatus
	}
	var got []shape
	for _, list := range [][]v1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses} {
		for _, s := range list {
			got = append(got, shape{s.Name, s.Resources, s.AllocatedResources, s.VolumeMounts})
		}
	}
	token := `{"name":"kube-api-access-x7k2p","mountPath":"/var/run/secrets/kubernetes.io/serviceaccount","readOnly":true,"recursiveReadOnly":"Disabled"}`
	want := `[` +
		`{"Name":"init","Resources":{},"VolumeMounts":[` + token + `]},` +
		`{"Name":"side","Resources":{"requests":{"cpu":"50m","memory":"32Mi"}},"AllocatedResources":{"cpu":"50m","memory":"32Mi"},"VolumeMounts":[` + token + `]},` +
		`{"Name":"main","Resources":{"limits":{"cpu":"200m","memory":"64Mi"},"requests":{"cpu":"200m","memory":"64Mi"}},"AllocatedResources":{"cpu":"200m","memory":"64Mi"},"VolumeMounts":[` +
		`{"name":"data","mountPath":"/data"},{"name":"data","mountPath":"/ro","readOnly":true,"recursiveReadOnly":"Disabled"},` + token + `]},` +
		`{"Name":"plain","Resources":{},"VolumeMounts":[` + token + `]},` +
		// A container the runtime does not have yet: mounts, no resources (as the kubelet).
		`{"Name":"waiting","VolumeMounts":[` + token + `]}` +
		`]`
	if diff := cmp.Diff(want, jsonOf(t, got)); diff != "" {
		t.Errorf("container statuses (-want +got):\n%s", diff)
	}
	wantPod := `{"limits":{"cpu":"200m","memory":"64Mi"},"requests":{"cpu":"250m","memory":"96Mi"}}`
	if diff := cmp.Diff(wantPod, jsonOf(t, st.Resources)); diff != "" {
		t.Errorf("pod resources (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(`{"cpu":"250m","memory":"96Mi"}`, jsonOf(t, st.AllocatedResources)); diff != "" {
		t.Errorf("pod allocatedResources (-want +got):\n%s", diff)
	}
}

// A terminated container the runtime no longer holds keeps the resources of its last status.
func TestGeneratePodStatusKeepsResourcesOfRemovedContainer(t *testing.T) {
	c := withResources(ctr("c"), rl("cpu", "10m"), nil)
	pod := testPod(withContainers(c), withRestart(v1.RestartPolicyNever))
	pod.Status.Phase = v1.PodSucceeded
	pod.Status.ContainerStatuses = []v1.ContainerStatus{{
		Name: "c", State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 0}},
		Resources: &v1.ResourceRequirements{Requests: rl("cpu", "10m")}, AllocatedResources: rl("cpu", "10m"),
	}}
	st := generatePodStatus(statusIn(pod, rtOf(nil)))
	got := st.ContainerStatuses[0]
	if diff := cmp.Diff(`{"requests":{"cpu":"10m"}}`+` {"cpu":"10m"}`, jsonOf(t, got.Resources)+" "+jsonOf(t, got.AllocatedResources)); diff != "" {
		t.Errorf("resources (-want +got):\n%s", diff)
	}
}

func TestPodCgroupExists(t *testing.T) {
	a := ctr("a")
	cases := []struct {
		name string
		in   statusInput
		want bool
	}{
		{"pod not terminal", statusInput{Runtime: rtOf(nil)}, true},
		{"terminal, sandbox ready", statusInput{Terminal: true, Runtime: rtOf(sbs(sandbox("s1", 0, true)))}, true},
		{"terminal, a container still running", statusInput{Terminal: true, Runtime: rtOf(sbs(sandbox("s1", 0, false)), running(a, "c", "s1"))}, true},
		{"terminal, everything stopped", statusInput{Terminal: true, Runtime: rtOf(sbs(sandbox("s1", 0, false)), exited(a, "c", "s1", 0))}, false},
		{"terminal, nothing left", statusInput{Terminal: true}, false},
	}
	for _, tc := range cases {
		if got := podCgroupExists(tc.in); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestSharesThroughWeight(t *testing.T) {
	for _, tc := range []struct{ in, want int64 }{{2, 2}, {1024, 998}, {262144, 262144}} {
		if got := sharesThroughWeight(tc.in); got != tc.want {
			t.Errorf("sharesThroughWeight(%d) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// With pod cgroups, the status reads the pod cgroup's real settings back; for a pod whose
// cgroup was made with the kubelet's values, that is what the model of the kubelet's cgroup
// gives.
func TestKubeletPodCgroupReadsTheRealCgroup(t *testing.T) {
	pod := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "a", Resources: v1.ResourceRequirements{
		Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("250m"), v1.ResourceMemory: resource.MustParse("32Mi")},
		Limits:   v1.ResourceList{v1.ResourceCPU: resource.MustParse("250m"), v1.ResourceMemory: resource.MustParse("32Mi")},
	}}}}}
	model := podCgroupModel{PageSize: 4096}
	rc := cm.PodResourceConfig(pod, cm.DefaultPodOptions())
	real := kubeletPodCgroup(pod, model.withReadback(rc))
	modelled := kubeletPodCgroup(pod, model)
	if *real.shares != *modelled.shares || real.cpuLimit.Cmp(*modelled.cpuLimit) != 0 || real.memoryLimit.Cmp(*modelled.memoryLimit) != 0 {
		t.Errorf("read back %v %v %v, modelled %v %v %v", *real.shares, real.cpuLimit, real.memoryLimit, *modelled.shares, modelled.cpuLimit, modelled.memoryLimit)
	}
	// The cgroup, not the spec, decides: a cgroup still at 64Mi (a resize not applied) reads 64Mi.
	held := int64(64 << 20)
	rc.Memory = &held
	if got := kubeletPodCgroup(pod, model.withReadback(rc)).memoryLimit; got.Value() != held {
		t.Errorf("memory limit read back %v, want the cgroup's %d", got, held)
	}
}
