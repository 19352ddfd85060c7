//go:build e2e

package e2e

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// podCondition returns the pod's condition of that type, or nil.
func podCondition(p *v1.Pod, typ v1.PodConditionType) *v1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == typ {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// patchCondition sets one status condition of the pod, as a controller owning a readiness gate
// does (a strategic merge patch of the status subresource, as the NodeConformance spec does).
func patchCondition(t *testing.T, ns, name, typ string, status v1.ConditionStatus) {
	t.Helper()
	patch := fmt.Sprintf(`{"status":{"conditions":[{"type":%q,"status":%q}]}}`, typ, status)
	_, err := s.kube.CoreV1().Pods(ns).Patch(ctxFor(t, 30*time.Second), name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status")
	if err != nil {
		t.Fatalf("patching condition %s=%s: %v", typ, status, err)
	}
}

// readyIs reports whether the pod's Ready condition has that status, reason and message.
func readyIs(status v1.ConditionStatus, reason, message string) func(*v1.Pod) bool {
	return func(p *v1.Pod) bool {
		c := podCondition(p, v1.PodReady)
		return c != nil && c.Status == status && c.Reason == reason && c.Message == message
	}
}

// Ready follows the readiness gates' conditions that someone else writes, with the kubelet's
// reason and messages, and vk-cri's own status updates never remove or revert those conditions.
func TestLifecycleReadinessGates(t *testing.T) {
	ns := newNamespace(t)
	const one, two = "k8s.io/test-condition1", "k8s.io/test-condition2"
	pod := basePod("gated", v1.Container{Name: "c", Image: image("busybox:latest"), Command: []string{"sleep", "3600"}})
	pod.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: one}, {ConditionType: two}}
	createPod(t, ns, pod)

	waitPod(t, ns, "gated", 60*time.Second, "running with the gates missing", func(p *v1.Pod) bool {
		c := podCondition(p, v1.ContainersReady)
		return p.Status.Phase == v1.PodRunning && c != nil && c.Status == v1.ConditionTrue &&
			readyIs(v1.ConditionFalse, "ReadinessGatesNotReady",
				`corresponding condition of pod readiness gate "k8s.io/test-condition1" does not exist., `+
					`corresponding condition of pod readiness gate "k8s.io/test-condition2" does not exist.`)(p)
	})

	patchCondition(t, ns, "gated", one, v1.ConditionTrue)
	// vk-cri noticed the first gate (the message changes) and kept its condition while writing.
	p := waitPod(t, ns, "gated", 15*time.Second, "Ready False for the second gate only",
		readyIs(v1.ConditionFalse, "ReadinessGatesNotReady", `corresponding condition of pod readiness gate "k8s.io/test-condition2" does not exist.`))
	if c := podCondition(p, one); c == nil || c.Status != v1.ConditionTrue {
		t.Fatalf("the first gate's condition was not kept: %+v", p.Status.Conditions)
	}

	start := time.Now()
	patchCondition(t, ns, "gated", two, v1.ConditionTrue)
	p = waitPod(t, ns, "gated", 15*time.Second, "Ready True with both gates True", readyIs(v1.ConditionTrue, "", ""))
	t.Logf("Ready True %v after the second gate's patch", time.Since(start).Round(time.Millisecond))
	for _, g := range []string{one, two} {
		if c := podCondition(p, v1.PodConditionType(g)); c == nil || c.Status != v1.ConditionTrue {
			t.Fatalf("gate %s's condition not kept: %+v", g, p.Status.Conditions)
		}
	}
	// The gates' conditions stay before the kubelet's own, as the kubelet orders them (their
	// own order is the API server's merge of the patches).
	for i, c := range p.Status.Conditions[:2] {
		if c.Type != one && c.Type != two {
			t.Errorf("condition %d is %s, want a gate's: %+v", i, c.Type, p.Status.Conditions)
		}
	}

	patchCondition(t, ns, "gated", one, v1.ConditionFalse)
	waitPod(t, ns, "gated", 15*time.Second, "Ready False again",
		readyIs(v1.ConditionFalse, "ReadinessGatesNotReady", `the status of pod readiness gate "k8s.io/test-condition1" is not "True", but False`))
}

// A gate's condition written while the pod's containers change survives vk-cri's status updates
// of those changes: a restarting container makes vk-cri write status again and again.
func TestLifecycleReadinessGatesKeptAcrossRestarts(t *testing.T) {
	ns := newNamespace(t)
	const gate = "example.com/lb-ready"
	pod := basePod("gated-restarts",
		v1.Container{Name: "steady", Image: image("busybox:latest"), Command: []string{"sleep", "3600"}},
		busybox("flaky", "sleep 2; exit 1"))
	pod.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: gate}}
	createPod(t, ns, pod)
	waitPod(t, ns, "gated-restarts", 60*time.Second, "running", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodRunning })
	patchCondition(t, ns, "gated-restarts", gate, v1.ConditionTrue)
	p := waitPod(t, ns, "gated-restarts", 60*time.Second, "two restarts of the flaky container", func(p *v1.Pod) bool {
		for _, c := range p.Status.ContainerStatuses {
			if c.Name == "flaky" {
				return c.RestartCount >= 2
			}
		}
		return false
	})
	if c := podCondition(p, gate); c == nil || c.Status != v1.ConditionTrue {
		t.Fatalf("the gate's condition was lost across vk-cri's status updates: %+v", p.Status.Conditions)
	}
	// Ready follows the flaky container, never the gate.
	if c := podCondition(p, v1.PodReady); c == nil || c.Reason == "ReadinessGatesNotReady" {
		t.Errorf("Ready = %+v, want it to follow the containers only", c)
	}
}
