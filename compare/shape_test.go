package compare

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/vk-cri/vk-cri/internal/golden"
)

func loadPod(t *testing.T, path string) *v1.Pod {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var p v1.Pod
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &p
}

func shapeDiffs(a, b *v1.Pod) []Diff {
	ra := &SideRecord{Pods: map[string]*PodRecord{"p": {Final: ShapeOf(a)}}}
	rb := &SideRecord{Pods: map[string]*PodRecord{"p": {Final: ShapeOf(b)}}}
	return DiffSides(ra, rb, CompareOptions{})
}

func diffPaths(ds []Diff) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Path+": "+d.A+" | "+d.B)
	}
	return out
}

// The same pods on the upstream kubelet (ref) and on vk-cri, recorded from the local stack (an
// init container, a sidecar with requests, a container with limits and two mounts of an
// emptyDir, one read-only, a container without resources, the service-account token; and a
// finished Burstable pod): their shapes agree, and the golden file shows what is compared.
func TestShapeOfRecordedPods(t *testing.T) {
	for _, name := range []string{"full", "done"} {
		t.Run(name, func(t *testing.T) {
			ref := loadPod(t, "testdata/shape/ref-"+name+".json")
			vk := loadPod(t, "testdata/shape/vk-"+name+".json")
			if ds := shapeDiffs(ref, vk); len(ds) > 0 {
				t.Errorf("recorded kubelet and vk-cri pods differ:\n%s", strings.Join(diffPaths(ds), "\n"))
			}
			got, err := json.MarshalIndent(ShapeOf(ref), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, "testdata/shape/"+name+".golden", append(got, '\n'))
		})
	}
}

// What vk-cri wrote before it reported these fields: the shape check finds every one of them.
func TestShapeSeesMissingFields(t *testing.T) {
	ref := loadPod(t, "testdata/shape/ref-full.json")
	old := ref.DeepCopy()
	old.Status.Resources, old.Status.AllocatedResources = nil, nil
	for _, list := range [][]v1.ContainerStatus{old.Status.InitContainerStatuses, old.Status.ContainerStatuses} {
		for i := range list {
			list[i].Resources, list[i].AllocatedResources, list[i].VolumeMounts = nil, nil, nil
		}
	}
	got := map[string]bool{}
	for _, d := range shapeDiffs(ref, old) {
		got[d.Path] = true
	}
	for _, want := range []string{
		"pods/p/final.paths.resources.requests.cpu",
		"pods/p/final.paths.allocatedResources.memory",
		"pods/p/final.paths.initContainerStatuses[init].resources",
		"pods/p/final.paths.initContainerStatuses[side].allocatedResources.cpu",
		"pods/p/final.paths.containerStatuses[main].resources.limits.memory",
		"pods/p/final.paths.containerStatuses[main].volumeMounts[/ro].recursiveReadOnly",
		"pods/p/final.paths.containerStatuses[plain].volumeMounts[/var/run/secrets/kubernetes.io/serviceaccount].name",
		"pods/p/final.values.resources",
		"pods/p/final.values.containerStatuses[main].volumeMounts",
		"pods/p/final.values.initContainerStatuses[init].resources",
	} {
		if !got[want] {
			t.Errorf("no diff at %s; diffs: %v", want, got)
		}
	}
}

func TestShapeOfValues(t *testing.T) {
	pod := func(mutate func(*v1.Pod)) *v1.Pod {
		p := loadPod(t, "testdata/shape/vk-full.json")
		mutate(p)
		return p
	}
	base := pod(func(*v1.Pod) {})
	cases := []struct {
		name      string
		other     *v1.Pod
		wantDiffs []string
	}{
		{
			name: "another token volume suffix: the same",
			other: pod(func(p *v1.Pod) {
				for _, list := range [][]v1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
					for i := range list {
						for j := range list[i].VolumeMounts {
							if strings.HasPrefix(list[i].VolumeMounts[j].Name, "kube-api-access-") {
								list[i].VolumeMounts[j].Name = "kube-api-access-zzzzz"
							}
						}
					}
				}
			}),
		},
		{
			name: "Burstable pod without every memory limit: its memory limit is the kubelet's timing, left out",
			other: pod(func(p *v1.Pod) {
				p.Status.Resources.Limits[v1.ResourceMemory] = resource.MustParse("64Mi")
			}),
		},
		{
			name: "a container's memory limit differs",
			other: pod(func(p *v1.Pod) {
				p.Status.ContainerStatuses[0].Resources.Limits[v1.ResourceMemory] = resource.MustParse("32Mi")
			}),
			wantDiffs: []string{`pods/p/final.values.containerStatuses[main].resources: {"limits":{"cpu":"200m","memory":"64Mi"},"requests":{"cpu":"200m","memory":"64Mi"}} | {"limits":{"cpu":"200m","memory":"32Mi"},"requests":{"cpu":"200m","memory":"64Mi"}}`},
		},
		{
			name: "recursiveReadOnly missing on a read-only mount",
			other: pod(func(p *v1.Pod) {
				p.Status.ContainerStatuses[0].VolumeMounts[1].RecursiveReadOnly = nil
			}),
			wantDiffs: []string{
				"pods/p/final.paths.containerStatuses[main].volumeMounts[/ro].recursiveReadOnly: present | (absent)",
				`pods/p/final.values.containerStatuses[main].volumeMounts: [{"name":"data","mountPath":"/data"},{"name":"data","mountPath":"/ro","readOnly":true,"recursiveReadOnly":"Disabled"},{"name":"kube-api-access-<suffix>","mountPath":"/var/run/secrets/kubernetes.io/serviceaccount","readOnly":true,"recursiveReadOnly":"Disabled"}] | [{"name":"data","mountPath":"/data"},{"name":"data","mountPath":"/ro","readOnly":true},{"name":"kube-api-access-<suffix>","mountPath":"/var/run/secrets/kubernetes.io/serviceaccount","readOnly":true,"recursiveReadOnly":"Disabled"}]`,
			},
		},
		{
			name:      "a field only one side writes",
			other:     pod(func(p *v1.Pod) { p.Status.NominatedNodeName = "n" }),
			wantDiffs: []string{"pods/p/final.paths.nominatedNodeName: (absent) | present"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.wantDiffs, diffPaths(shapeDiffs(base, tc.other))); diff != "" {
				t.Errorf("diffs (-want +got):\n%s", diff)
			}
		})
	}
}

// A finished pod's resources are compared for their presence only.
func TestShapeOfFinishedPodResources(t *testing.T) {
	done := loadPod(t, "testdata/shape/ref-done.json")
	other := done.DeepCopy()
	other.Status.Resources = &v1.ResourceRequirements{}
	if ds := shapeDiffs(done, other); len(ds) > 0 {
		t.Errorf("finished pods whose resources differ in value: %v", diffPaths(ds))
	}
	other.Status.Resources = nil
	want := []string{
		"pods/p/final.paths.resources: present | (absent)",
		"pods/p/final.values.resources: {} | (absent)",
	}
	if diff := cmp.Diff(want, diffPaths(shapeDiffs(done, other))); diff != "" {
		t.Errorf("diffs (-want +got):\n%s", diff)
	}
}

func TestPodMemoryLimitVaries(t *testing.T) {
	limited := v1.Container{Resources: v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceMemory: resource.MustParse("1Mi")}}}
	cases := []struct {
		name string
		spec v1.PodSpec
		want bool
	}{
		{"BestEffort", v1.PodSpec{Containers: []v1.Container{{}}}, true},
		{"every container limited", v1.PodSpec{InitContainers: []v1.Container{limited}, Containers: []v1.Container{limited}}, false},
		{"an init container without a limit", v1.PodSpec{InitContainers: []v1.Container{{}}, Containers: []v1.Container{limited}}, true},
		{"pod-level limit", v1.PodSpec{Containers: []v1.Container{{}}, Resources: &v1.ResourceRequirements{Limits: limited.Resources.Limits}}, false},
	}
	for _, tc := range cases {
		if got := podMemoryLimitVaries(&v1.Pod{Spec: tc.spec}); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A finished pod's last PodReadyToStartContainers is True or False (PodSandboxNotReady) from run
// to run on the kubelet: its reason and message are not in the shape; a running pod's are.
func TestShapeOfFinishedPodLeavesReadyToStartReasonOut(t *testing.T) {
	done := loadPod(t, "testdata/shape/ref-done.json")
	withReady := func(p *v1.Pod, st v1.ConditionStatus, reason, msg string) *v1.Pod {
		p = p.DeepCopy()
		var conds []v1.PodCondition
		for _, c := range p.Status.Conditions {
			if c.Type != v1.PodReadyToStartContainers {
				conds = append(conds, c)
			}
		}
		p.Status.Conditions = append(conds, v1.PodCondition{Type: v1.PodReadyToStartContainers, Status: st, Reason: reason, Message: msg})
		return p
	}
	sandboxReady := withReady(done, v1.ConditionTrue, "", "")
	sandboxGone := withReady(done, v1.ConditionFalse, "PodSandboxNotReady", "pod sandbox is not ready")
	if ds := shapeDiffs(sandboxReady, sandboxGone); len(ds) > 0 {
		t.Errorf("finished pods: %v", diffPaths(ds))
	}
	running := func(p *v1.Pod) *v1.Pod { p.Status.Phase = v1.PodRunning; return p }
	if ds := shapeDiffs(running(sandboxReady), running(sandboxGone)); len(ds) != 2 {
		t.Errorf("running pods: want the reason and the message, got %v", diffPaths(ds))
	}
}
