package provider

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/vk-cri/vk-cri/cri"
)

func TestMergeConditions(t *testing.T) {
	gate := func(s v1.ConditionStatus) v1.PodCondition {
		return v1.PodCondition{Type: "example.com/gate", Status: s}
	}
	owned := []v1.PodCondition{
		{Type: v1.PodReadyToStartContainers, Status: v1.ConditionTrue},
		{Type: v1.PodReady, Status: v1.ConditionFalse, Reason: "ReadinessGatesNotReady"},
		{Type: v1.PodScheduled, Status: v1.ConditionTrue},
	}
	evicted := v1.PodCondition{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: "TerminationByKubelet"}
	cases := []struct {
		name      string
		api, ours []v1.PodCondition
		want      []v1.PodCondition
	}{
		{"a gate condition written in the API meanwhile wins over the one vk-cri last saw",
			[]v1.PodCondition{gate(v1.ConditionTrue), {Type: v1.PodReady, Status: v1.ConditionTrue}},
			append([]v1.PodCondition{gate(v1.ConditionFalse)}, owned...),
			append([]v1.PodCondition{gate(v1.ConditionTrue)}, owned...)},
		{"a foreign condition vk-cri never saw is kept, first",
			[]v1.PodCondition{gate(v1.ConditionFalse)},
			owned,
			append([]v1.PodCondition{gate(v1.ConditionFalse)}, owned...)},
		{"a foreign condition removed from the API is not brought back",
			nil,
			append([]v1.PodCondition{gate(v1.ConditionTrue)}, owned...),
			owned},
		{"kubelet-owned conditions are vk-cri's, never the API's",
			[]v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}, {Type: v1.PodResizePending, Status: v1.ConditionTrue}},
			owned,
			owned},
		{"vk-cri's DisruptionTarget (an eviction) replaces the API's",
			[]v1.PodCondition{{Type: v1.DisruptionTarget, Status: v1.ConditionFalse}, gate(v1.ConditionTrue)},
			append(append([]v1.PodCondition{}, owned...), evicted),
			append([]v1.PodCondition{evicted, gate(v1.ConditionTrue)}, owned...)},
		{"a DisruptionTarget written by a controller is kept when vk-cri has none",
			[]v1.PodCondition{{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: "PreemptionByScheduler"}},
			owned,
			append([]v1.PodCondition{{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: "PreemptionByScheduler"}}, owned...)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, MergeConditions(tc.api, tc.ours)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// Ready follows ContainersReady and the readiness gates' conditions, with the kubelet's reason
// and messages, whatever the order of the conditions.
func TestReadyConditionWithReadinessGates(t *testing.T) {
	pod := testPod(withContainers(ctr("a")))
	pod.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: "k8s.io/one"}, {ConditionType: "k8s.io/two"}}
	containersReady := v1.PodCondition{Type: v1.ContainersReady, Status: v1.ConditionTrue}
	notReady := v1.PodCondition{Type: v1.ContainersReady, Status: v1.ConditionFalse, Reason: reasonContainersNotReady, Message: "containers with unready status: [a]"}
	cond := func(typ string, s v1.ConditionStatus) v1.PodCondition {
		return v1.PodCondition{Type: v1.PodConditionType(typ), Status: s}
	}
	cases := []struct {
		name            string
		conds           []v1.PodCondition
		containersReady v1.PodCondition
		want            condSummary
	}{
		{"no gate condition yet", nil, containersReady,
			condSummary{v1.PodReady, v1.ConditionFalse, "ReadinessGatesNotReady",
				`corresponding condition of pod readiness gate "k8s.io/one" does not exist., corresponding condition of pod readiness gate "k8s.io/two" does not exist.`}},
		{"one gate True, the other missing", []v1.PodCondition{cond("k8s.io/one", v1.ConditionTrue)}, containersReady,
			condSummary{v1.PodReady, v1.ConditionFalse, "ReadinessGatesNotReady", `corresponding condition of pod readiness gate "k8s.io/two" does not exist.`}},
		{"one gate False", []v1.PodCondition{cond("k8s.io/two", v1.ConditionTrue), cond("k8s.io/one", v1.ConditionFalse)}, containersReady,
			condSummary{v1.PodReady, v1.ConditionFalse, "ReadinessGatesNotReady", `the status of pod readiness gate "k8s.io/one" is not "True", but False`}},
		{"both gates True", []v1.PodCondition{cond("k8s.io/two", v1.ConditionTrue), cond("k8s.io/one", v1.ConditionTrue)}, containersReady,
			condSummary{v1.PodReady, v1.ConditionTrue, "", ""}},
		{"containers not ready: their reason, gates aside", []v1.PodCondition{cond("k8s.io/one", v1.ConditionTrue)}, notReady,
			condSummary{v1.PodReady, v1.ConditionFalse, reasonContainersNotReady, "containers with unready status: [a]"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := summarize([]v1.PodCondition{readyCondition(pod, tc.conds, tc.containersReady)})[0]
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// A gate condition written in the API after vk-cri's last status reaches the next status vk-cri
// computes, and wakes the pod's worker: Ready turns True once both gates are True, with the
// gates' conditions reported as the API has them.
func TestObservedAPIConditionsReachTheStatus(t *testing.T) {
	a := ctr("a")
	pod := testPod(withContainers(a))
	pod.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: "k8s.io/one"}, {ConditionType: "k8s.io/two"}}
	p := &Provider{rt: &cri.Client{}, pods: newPodStore(), alloc: newAllocationStore(filepath.Join(t.TempDir(), allocationFile))}
	rec, _ := p.pods.add(newPodRecord(podIdentity{Namespace: pod.Namespace, Name: pod.Name, UID: string(pod.UID)}, pod))
	rt := rtOf(sbs(sandbox("s1", 0, true)), running(a, "c-a", "s1"))
	rec.status = ptrTo(p.computeStatus(rec, pod, rt, statusLive))
	if c, _ := findCond(rec.status.Conditions, v1.PodReady); c.Status != v1.ConditionFalse {
		t.Fatalf("Ready before the gates = %s, want False", c.Status)
	}

	inAPI := pod.DeepCopy()
	inAPI.Status = *rec.status.DeepCopy()
	inAPI.Status.Conditions = append([]v1.PodCondition{{Type: "k8s.io/two", Status: v1.ConditionTrue}, {Type: "k8s.io/one", Status: v1.ConditionTrue}}, inAPI.Status.Conditions...)
	p.ObserveAPIStatus(inAPI)
	select {
	case <-rec.wake:
	default:
		t.Error("the worker was not woken by the gates' change")
	}
	p.ObserveAPIStatus(inAPI)
	select {
	case <-rec.wake:
		t.Error("the worker was woken again without a change")
	default:
	}

	got := p.computeStatus(rec, pod, rt, statusLive)
	want := []condSummary{
		{"k8s.io/two", v1.ConditionTrue, "", ""},
		{"k8s.io/one", v1.ConditionTrue, "", ""},
		{v1.PodReadyToStartContainers, v1.ConditionTrue, "", ""},
		{v1.PodInitialized, v1.ConditionTrue, "", ""},
		{v1.PodReady, v1.ConditionTrue, "", ""},
		{v1.ContainersReady, v1.ConditionTrue, "", ""},
		{v1.PodScheduled, v1.ConditionTrue, "", ""},
	}
	if diff := cmp.Diff(want, summarize(got.Conditions)); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
}
