package provider

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPodLifecycleTransitions(t *testing.T) {
	ev := &eviction{message: "low on memory", grace: 0}
	fail := &podFailure{Reason: reasonDeadlineExceeded, Message: messageDeadlineExceeded}
	at := func(state podWorkState, reason terminationReason, deleted bool) podLifecycle {
		l := podLifecycle{state: state, reason: reason}
		if deleted {
			l.deletion = &podDeletion{grace: 30}
		}
		return l
	}
	cases := []struct {
		name   string
		from   podLifecycle
		change lifecycleChange
		ok     bool
	}{
		{"deleted", at(podSyncing, "", false), lifecycleChange{to: podTerminating, reason: terminationDeleted}, true},
		{"orphaned", at(podSyncing, "", false), lifecycleChange{to: podTerminating, reason: terminationOrphaned}, true},
		{"finished", at(podSyncing, "", false), lifecycleChange{to: podTerminating, reason: terminationFinished}, true},
		{"evicted", at(podSyncing, "", false), lifecycleChange{to: podTerminating, reason: terminationEvicted, eviction: ev}, true},
		{"evicted without details", at(podSyncing, "", false), lifecycleChange{to: podTerminating, reason: terminationEvicted}, false},
		{"deadline exceeded", at(podSyncing, "", false), lifecycleChange{to: podTerminating, reason: terminationDeadlineExceeded, failure: fail}, true},
		{"deadline exceeded without its failure", at(podSyncing, "", false), lifecycleChange{to: podTerminating, reason: terminationDeadlineExceeded}, false},
		{"terminating without a reason", at(podSyncing, "", false), lifecycleChange{to: podTerminating}, false},
		{"rejected at admission: nothing to stop", at(podSyncing, "", false), lifecycleChange{to: podTerminated, reason: terminationRejected}, true},
		{"terminal in the API already", at(podSyncing, "", false), lifecycleChange{to: podTerminated, reason: terminationFinished}, true},
		{"deleted pods are stopped first", at(podSyncing, "", false), lifecycleChange{to: podTerminated, reason: terminationDeleted}, false},
		{"rejected while terminating", at(podTerminating, terminationDeleted, true), lifecycleChange{to: podTerminated, reason: terminationRejected}, false},
		{"stopped", at(podTerminating, terminationEvicted, false), lifecycleChange{to: podTerminated}, true},
		{"terminating twice", at(podTerminating, terminationDeleted, true), lifecycleChange{to: podTerminating, reason: terminationEvicted, eviction: ev}, false},
		{"back to syncing", at(podTerminating, terminationFinished, false), lifecycleChange{to: podSyncing}, false},
		{"terminated pods never sync again", at(podTerminated, terminationFinished, false), lifecycleChange{to: podSyncing}, false},
		{"terminated pods never stop again", at(podTerminated, terminationFinished, false), lifecycleChange{to: podTerminating, reason: terminationDeleted}, false},
		{"removed once deleted", at(podTerminated, terminationFinished, true), lifecycleChange{to: podRemoved}, true},
		{"not removed unless deleted", at(podTerminated, terminationEvicted, false), lifecycleChange{to: podRemoved}, false},
		{"removed before it stopped", at(podTerminating, terminationDeleted, true), lifecycleChange{to: podRemoved}, false},
		{"removed twice", at(podRemoved, terminationDeleted, true), lifecycleChange{to: podRemoved}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := tc.from
			err := l.transition(tc.change)
			if (err == nil) != tc.ok {
				t.Fatalf("transition: %v, want allowed %v", err, tc.ok)
			}
			if err != nil {
				if l != tc.from {
					t.Errorf("a refused transition changed the lifecycle: %+v, was %+v", l, tc.from)
				}
				return
			}
			if l.state != tc.change.to {
				t.Errorf("state %s, want %s", l.state, tc.change.to)
			}
			if tc.from.state == podSyncing && l.reason != tc.change.reason {
				t.Errorf("reason %q, want %q", l.reason, tc.change.reason)
			}
			if tc.from.state != podSyncing && l.reason != tc.from.reason {
				t.Errorf("reason changed to %q from %q", l.reason, tc.from.reason)
			}
		})
	}
}

func TestRequestDeletionBeginsTheTerminationOfASyncingPodOnly(t *testing.T) {
	now := metav1.Now()
	deleted := testPod()
	grace := int64(5)
	deleted.DeletionTimestamp, deleted.DeletionGracePeriodSeconds = &now, &grace
	deleted.Status.Phase = v1.PodRunning

	var l podLifecycle
	req := deletionRequest{Spec: testPod(), Deleted: deleted}
	l.requestDeletion(req, req.gracePeriod())
	if l.state != podTerminating || l.reason != terminationDeleted || l.deletion == nil || !l.deletion.inAPI ||
		l.deletion.grace != 5 || l.deletion.seen == nil || l.deletion.seen.Phase != v1.PodRunning {
		t.Fatalf("after the deletion: %+v (deletion %+v)", l, l.deletion)
	}
	// A longer grace period later never lengthens it; the pod is not terminated twice.
	l.requestDeletion(deletionRequest{Spec: testPod()}, 30)
	if l.deletion.grace != 5 || l.state != podTerminating {
		t.Errorf("after a second request: grace %d, state %s", l.deletion.grace, l.state)
	}

	orphan := podLifecycle{}
	orphan.requestDeletion(deletionRequest{}, orphanGracePeriod)
	if orphan.reason != terminationOrphaned || !orphan.orphan() {
		t.Errorf("an orphan's deletion: reason %q", orphan.reason)
	}

	finished := podLifecycle{state: podTerminated, reason: terminationFinished}
	finished.requestDeletion(deletionRequest{Spec: testPod()}, 30)
	if finished.state != podTerminated || finished.reason != terminationFinished || finished.deletion == nil {
		t.Errorf("a finished pod deleted: %+v", finished)
	}
	if !finished.endedInPlace() {
		t.Error("a finished pod that is deleted still ended in place (its status stays its own)")
	}
}

func TestTerminationGracePeriod(t *testing.T) {
	spec := func(grace *int64) *v1.Pod {
		p := testPod()
		p.Spec.TerminationGracePeriodSeconds = grace
		return p
	}
	i := func(v int64) *int64 { return &v }
	cases := []struct {
		name string
		spec *v1.Pod
		l    podLifecycle
		want int64
	}{
		{"deleted: the deletion's", spec(i(30)), podLifecycle{reason: terminationDeleted, deletion: &podDeletion{grace: 10}}, 10},
		{"deleted with grace 0: 1 s", spec(i(30)), podLifecycle{reason: terminationDeleted, deletion: &podDeletion{grace: 0}}, 1},
		{"orphaned", nil, podLifecycle{reason: terminationOrphaned, deletion: &podDeletion{grace: orphanGracePeriod}}, 1},
		{"evicted: the override, even longer than the spec's", spec(i(5)), podLifecycle{reason: terminationEvicted, eviction: &eviction{grace: 20}}, 20},
		{"evicted with override 0: 1 s", spec(i(30)), podLifecycle{reason: terminationEvicted, eviction: &eviction{grace: 0}}, 1},
		{"evicted, then deleted shorter", spec(i(30)), podLifecycle{reason: terminationEvicted, eviction: &eviction{grace: 20}, deletion: &podDeletion{grace: 3}}, 3},
		{"evicted, then deleted longer", spec(i(30)), podLifecycle{reason: terminationEvicted, eviction: &eviction{grace: 20}, deletion: &podDeletion{grace: 25}}, 20},
		{"deadline exceeded: the spec's", spec(i(7)), podLifecycle{reason: terminationDeadlineExceeded}, 7},
		{"deadline exceeded, spec's 0: 1 s", spec(i(0)), podLifecycle{reason: terminationDeadlineExceeded}, 1},
		{"finished, no spec grace: 30 s", spec(nil), podLifecycle{reason: terminationFinished}, 30},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := terminationGracePeriod(tc.spec, tc.l); got != tc.want {
				t.Errorf("grace %d, want %d", got, tc.want)
			}
		})
	}
}
