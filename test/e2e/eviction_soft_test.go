//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// A soft threshold sets MemoryPressure at once but evicts only once it has been met for its
// grace period, and the evicted pod gets --eviction-max-pod-grace-period, not its own 60 s.
func TestEvictionSoftThresholdWaitsForItsGracePeriod(t *testing.T) {
	ns := newNamespace(t)
	// SIGTERM is ignored: only the grace period's end (SIGKILL) stops it.
	p := basePod("soft", busybox("c", "trap '' TERM; while true; do sleep 1; done"))
	grace := int64(60)
	p.Spec.TerminationGracePeriodSeconds = &grace
	createPod(t, ns, p)
	waitPod(t, ns, "soft", 2*time.Minute, "running", isRunningReady)

	t.Cleanup(func() { restartNode(t, "") })
	// memory.available is always below 100 % of the node's memory.
	restartNode(t, "--eviction-soft=memory.available<100% --eviction-soft-grace-period=memory.available=30s --eviction-max-pod-grace-period=3")
	ready := time.Now()
	err := wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		c := nodeCondition(t, v1.NodeMemoryPressure)
		return c != nil && c.Status == v1.ConditionTrue, nil
	})
	if err != nil {
		t.Fatalf("no MemoryPressure within 30 s of a soft threshold met")
	}
	pressureAfter := time.Since(ready)
	evicted := waitPod(t, ns, "soft", 2*time.Minute, "evicted", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodFailed })
	var at metav1.Time
	for _, c := range evicted.Status.Conditions {
		if c.Type == v1.DisruptionTarget {
			at = c.LastTransitionTime
		}
	}
	if at.IsZero() {
		t.Fatalf("no DisruptionTarget condition: %+v", evicted.Status.Conditions)
	}
	evictedAfter := at.Sub(ready)
	if evictedAfter < 25*time.Second {
		t.Errorf("evicted %v after the node was ready, before the 30 s grace period", evictedAfter)
	}
	if !strings.HasPrefix(evicted.Status.Message, "The node was low on resource: memory. Threshold quantity: ") || evicted.Status.Reason != "Evicted" {
		t.Errorf("reason %q message %q", evicted.Status.Reason, evicted.Status.Message)
	}
	var killedAfter time.Duration
	if cs := evicted.Status.ContainerStatuses; len(cs) == 1 && cs[0].State.Terminated != nil {
		killedAfter = cs[0].State.Terminated.FinishedAt.Sub(at.Time)
		// 3 s, at the seconds' resolution of the timestamps, not the pod's 60 s.
		if killedAfter > 10*time.Second || cs[0].State.Terminated.ExitCode != 137 {
			t.Errorf("container ended %v after the eviction with exit code %d, want SIGKILL after about 3 s", killedAfter, cs[0].State.Terminated.ExitCode)
		}
	} else {
		t.Errorf("container not terminated: %s", describeStatus(evicted))
	}
	t.Logf("MemoryPressure %v after ready, eviction %v after ready, container killed %v after the eviction", pressureAfter.Round(time.Second), evictedAfter.Round(time.Second), killedAfter)
	// Deleted before the node restarts: a Failed pod vk-cri finds again at start is not given to
	// it by virtual-kubelet and would hold up the next pods' admission until it is dropped as
	// an orphan.
	deletePodAndWait(t, ns, "soft")
}
