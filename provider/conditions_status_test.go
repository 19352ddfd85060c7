package provider

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/vk-cri/vk-cri/cri"
)

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
