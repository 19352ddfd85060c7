package status

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
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
			got := summarize([]v1.PodCondition{ReadyCondition(pod, tc.conds, tc.containersReady)})[0]
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestListMessage(t *testing.T) {
	cases := []struct {
		a, b []string
		want string
	}{
		{nil, nil, ""},
		{[]string{"x"}, nil, "containers with unknown status: [x]"},
		{nil, []string{"y", "z"}, "containers with unready status: [y z]"},
		{[]string{"x"}, []string{"y"}, "containers with unknown status: [x], containers with unready status: [y]"},
	}
	for _, tc := range cases {
		if got := listMessage(tc.a, "unknown", tc.b, "unready"); got != tc.want {
			t.Errorf("listMessage(%v, %v) = %q, want %q", tc.a, tc.b, got, tc.want)
		}
	}
}

// The unknown-container branches cannot be reached through generatePodStatus (it reports every
// spec container); they are checked on the condition helpers directly.
func TestConditionHelpersUnknownContainers(t *testing.T) {
	pod := testPod(withInit(ctr("i1"), sidecarCtr("side")), withContainers(ctr("a"), ctr("b")))
	init := statuses(stTerminated("i1", 0))
	regular := statuses(stRunning("a"))

	ini := InitializedCondition(pod, init, nil, v1.PodPending)
	if want := (condSummary{v1.PodInitialized, v1.ConditionFalse, "ContainersNotInitialized", "containers with unknown status: [side]"}); summarize([]v1.PodCondition{ini})[0] != want {
		t.Errorf("initialized = %+v, want %+v", ini, want)
	}
	cr := ContainersReadyCondition(pod, init, regular, v1.PodRunning)
	if want := (condSummary{v1.ContainersReady, v1.ConditionFalse, "ContainersNotReady", "containers with unknown status: [side b]"}); summarize([]v1.PodCondition{cr})[0] != want {
		t.Errorf("containersReady = %+v, want %+v", cr, want)
	}
	// Succeeded with unknown containers is not "completed".
	cr = ContainersReadyCondition(pod, init, regular, v1.PodSucceeded)
	if cr.Reason != "ContainersNotReady" {
		t.Errorf("containersReady on Succeeded with unknown containers: reason %q, want ContainersNotReady", cr.Reason)
	}
	ini = InitializedCondition(pod, init, regular, v1.PodSucceeded)
	if ini.Reason == "PodCompleted" {
		t.Errorf("initialized on Succeeded with unknown init containers: reason PodCompleted")
	}
}
