package provider

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
)

// podWorkState is where a pod's worker stands in the pod's life. The names are the kubelet's
// pod workers' (pkg/kubelet/pod_workers.go: SyncPod, TerminatingPod, TerminatedPod), whose
// contract vk-cri's worker keeps:
//
//   - syncing: the pod is to run; each sync brings it one step closer to its spec (syncPod).
//     Nothing of a pod that left this state is ever started again.
//   - terminating: its containers are to be stopped, within the grace period the termination
//     chose, and its sandboxes with them (terminate, the kubelet's SyncTerminatingPod).
//   - terminated: nothing of it runs. Its volumes are torn down and the objects it referred to
//     released, for every reason (the kubelet's SyncTerminatedPod). A pod that ended in a
//     terminal phase of its own stays so, in the runtime (for logs and status) and in the API,
//     until it is deleted; a deleted one is removed.
//   - removed: its containers, sandboxes and directories are gone from the node and the pod from
//     the API; its worker ends.
//
// The state changes only through podLifecycle.transition, along these arrows:
//
//	                   rejected at admission, or already terminal in the API
//	    ┌──────────────────────────────────────────────────────────────────────┐
//	    │                                                                      ▼
//	syncing ──── deleted, evicted, deadline exceeded, ────▶ terminating ──▶ terminated ──▶ removed
//	             orphaned, finished                         (kill, stop     (volumes       (deleted pods
//	                                                         sandboxes)      torn down)      only)
//
// The reason is chosen with the first arrow out of syncing and never changes afterwards: a pod
// evicted, then deleted, ends as an evicted pod that is then removed.
type podWorkState int

const (
	podSyncing podWorkState = iota
	podTerminating
	podTerminated
	podRemoved
)

func (s podWorkState) String() string {
	switch s {
	case podSyncing:
		return "syncing"
	case podTerminating:
		return "terminating"
	case podTerminated:
		return "terminated"
	case podRemoved:
		return "removed"
	}
	return fmt.Sprintf("podWorkState(%d)", int(s))
}

// terminationReason is why a pod stopped being synced.
type terminationReason string

const (
	// terminationDeleted: the API deleted the pod, or gave its name to a pod with another UID.
	terminationDeleted terminationReason = "Deleted"
	// terminationEvicted: the eviction manager ended the pod, which stays Failed (Evicted).
	terminationEvicted terminationReason = "Evicted"
	// terminationDeadlineExceeded: the pod was active longer than its activeDeadlineSeconds and
	// stays Failed (DeadlineExceeded).
	terminationDeadlineExceeded terminationReason = "DeadlineExceeded"
	// terminationRejected: the node's admission refused the pod; nothing of it ever ran.
	terminationRejected terminationReason = "Rejected"
	// terminationOrphaned: vk-cri knows the pod only from the runtime (found there at start-up,
	// never claimed by the API) and it was deleted.
	terminationOrphaned terminationReason = "Orphaned"
	// terminationFinished: the pod reached Succeeded or Failed by itself.
	terminationFinished terminationReason = "Finished"
)

// keepsPod reports whether a pod that ended for this reason stays on the node and in the API in
// its terminal phase (until it is deleted) rather than being removed.
func (r terminationReason) keepsPod() bool {
	return r != terminationDeleted && r != terminationOrphaned
}

// podDeletion is a request to remove the pod from the node (and from the API, if it came from
// there). It may come in any state: a pod that ended by itself is removed once deleted.
type podDeletion struct {
	// grace is the grace period the deletion asks for (deletionRequest.gracePeriod); a later
	// request only ever shortens it.
	grace int64
	// inAPI is set when the API asked for the deletion (the pod has a deletion timestamp there),
	// so the pod is removed from the API once terminated.
	inAPI bool
	// goneFromAPI is set when the pod was removed from the API before vk-cri stopped it (a force
	// deletion): the kubelet records no Killing events then.
	goneFromAPI bool
	// removedFromAPI is set once vk-cri removed the terminated pod from the API (final status,
	// then the deletion); its runtime objects are removed after that (removeTerminated), and a
	// retry of their removal does not write the API again.
	removedFromAPI bool
	// seen is the pod's status in the API when vk-cri first saw its deletion timestamp: what the
	// kubelet's pod worker holds of the pod once it is deleted, from which its status manager
	// judges at the end whether the pod had initialised. Nil until then.
	seen *v1.PodStatus
}

// podLifecycle is the one place that says where a pod is in its life and why it ended. It is
// guarded by its podRecord's mutex and changed only through transition (the state and reason)
// and requestDeletion (the deletion request, which may also begin the termination).
type podLifecycle struct {
	state  podWorkState
	reason terminationReason
	// eviction is the eviction that ended the pod (reason terminationEvicted).
	eviction *eviction
	// failure is the reason and message vk-cri ended the pod Failed with itself (reason
	// terminationDeadlineExceeded).
	failure *podFailure
	// deletion is set once the pod is to be removed.
	deletion *podDeletion
	// volumesTornDown is set once the terminated pod's volumes are gone (the kubelet's pod
	// worker calls this "finished": SyncTerminatedPod completed).
	volumesTornDown bool
}

// lifecycleChange is one arrow of the drawing: the state to move to and, out of syncing, why.
type lifecycleChange struct {
	to     podWorkState
	reason terminationReason
	// eviction and failure are the details of terminationEvicted and
	// terminationDeadlineExceeded, which require them.
	eviction *eviction
	failure  *podFailure
}

// transition moves the pod along one arrow of podWorkState's drawing, or refuses the change
// (and changes nothing) when it is not one.
func (l *podLifecycle) transition(c lifecycleChange) error {
	if err := l.check(c); err != nil {
		return fmt.Errorf("pod lifecycle %s (%s) → %s (%s): %w", l.state, l.reason, c.to, c.reason, err)
	}
	if l.state == podSyncing {
		l.reason, l.eviction, l.failure = c.reason, c.eviction, c.failure
	}
	l.state = c.to
	return nil
}

func (l *podLifecycle) check(c lifecycleChange) error {
	switch {
	case l.state == podSyncing && c.to == podTerminating:
		switch c.reason {
		case terminationDeleted, terminationOrphaned, terminationFinished:
		case terminationEvicted:
			if c.eviction == nil {
				return fmt.Errorf("an eviction needs its details")
			}
		case terminationDeadlineExceeded:
			if c.failure == nil {
				return fmt.Errorf("a deadline exceeded needs its failure")
			}
		default:
			return fmt.Errorf("no termination begins for reason %q", c.reason)
		}
	case l.state == podSyncing && c.to == podTerminated:
		// Nothing runs to be stopped: a pod refused by admission, or one that is terminal in the
		// API already (it ended before vk-cri restarted).
		if c.reason != terminationRejected && c.reason != terminationFinished {
			return fmt.Errorf("only a rejected or already finished pod skips terminating")
		}
	case l.state == podTerminating && c.to == podTerminated:
	case l.state == podTerminated && c.to == podRemoved:
		if l.deletion == nil {
			return fmt.Errorf("only a deleted pod is removed")
		}
	default:
		return fmt.Errorf("not a transition of the pod's lifecycle")
	}
	if l.state != podSyncing && c.reason != "" && c.reason != l.reason {
		return fmt.Errorf("the termination reason never changes")
	}
	return nil
}

// requestDeletion records that the pod is to be removed, with the grace period the request asks
// for (a later request only shortens it), and begins the termination of a pod still syncing:
// with reason orphaned when vk-cri knows it only from the runtime, else deleted.
func (l *podLifecycle) requestDeletion(req deletionRequest, grace int64) {
	if l.deletion == nil {
		l.deletion = &podDeletion{grace: grace}
	} else if grace < l.deletion.grace {
		l.deletion.grace = grace
	}
	d := req.Deleted
	switch {
	case d != nil && d.DeletionTimestamp != nil:
		l.deletion.inAPI = true
		if l.deletion.seen == nil {
			l.deletion.seen = d.Status.DeepCopy()
		}
	case d != nil:
		l.deletion.goneFromAPI = true
	}
	if l.state == podSyncing {
		reason := terminationDeleted
		if req.orphan() {
			reason = terminationOrphaned
		}
		// Always an arrow of the drawing: syncing → terminating for a deletion.
		_ = l.transition(lifecycleChange{to: podTerminating, reason: reason})
	}
}

// endedInPlace reports whether the pod reached a terminal phase of its own (finished, evicted,
// deadline exceeded, rejected) and nothing of it runs: it stays, with that status, until it is
// deleted. vk-cri used to call this "finished".
func (l podLifecycle) endedInPlace() bool {
	return l.state >= podTerminated && l.reason.keepsPod()
}

// orphan reports whether the pod is an orphan being removed (known only from the runtime).
func (l podLifecycle) orphan() bool {
	return l.reason == terminationOrphaned
}
