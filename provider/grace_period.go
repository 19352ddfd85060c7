package provider

import v1 "k8s.io/api/core/v1"

// The grace periods of vk-cri, chosen here only. Two rules, the kubelet's:
//   - a container killed while its pod runs on (a failed liveness probe or postStart hook, a
//     sandbox that changed, a container to replace) gets containerKillGrace, as
//     kuberuntime_container.go killContainer picks it;
//   - a pod's termination gets terminationGracePeriod, as pod_workers.go
//     calculateEffectiveGracePeriod picks it for every reason: the deletion's grace, an
//     eviction's override, else the spec's; only ever shortened, and never under 1 s.
//
// Whatever the grace period, a container gets at least minStopGrace between its SIGTERM and its
// SIGKILL, after its preStop hook (killContainer's minimumGracePeriodInSeconds).

// minStopGrace is the least time a container gets between SIGTERM and SIGKILL, whatever is left
// of its grace period after its preStop hook, as with the kubelet.
const minStopGrace = 2

// orphanGracePeriod is the grace period the kubelet gives the containers of a pod it finds in
// the runtime and that the API does not have (force-deleted while the kubelet was down): it
// kills such an orphan with a 1 s override, so each container gets the minStopGrace minimum.
// It knows nothing more of the pod than the runtime's names, so no preStop hook runs either.
const orphanGracePeriod = 1

// containerKillGrace is the grace period of a container killed while its pod goes on: the
// API's deletion grace period, else the spec's terminationGracePeriodSeconds, else 30 s.
func containerKillGrace(pod *v1.Pod) int64 {
	switch {
	case pod.DeletionGracePeriodSeconds != nil:
		return *pod.DeletionGracePeriodSeconds
	case pod.Spec.TerminationGracePeriodSeconds != nil:
		return *pod.Spec.TerminationGracePeriodSeconds
	}
	return v1.DefaultTerminationGracePeriodSeconds
}

// gracePeriod is the grace period a deletion asks for, as the kubelet picks it: the API's
// deletion grace period, else the spec's terminationGracePeriodSeconds, else 30 s; an orphan's
// is orphanGracePeriod.
func (d deletionRequest) gracePeriod() int64 {
	switch {
	case d.orphan():
		return orphanGracePeriod
	case d.Deleted != nil && d.Deleted.DeletionGracePeriodSeconds != nil:
		return *d.Deleted.DeletionGracePeriodSeconds
	case d.Spec != nil && d.Spec.Spec.TerminationGracePeriodSeconds != nil:
		return *d.Spec.Spec.TerminationGracePeriodSeconds
	}
	return v1.DefaultTerminationGracePeriodSeconds
}

// terminationGracePeriod is the grace period of the pod's termination (its preStop hooks and
// stops together), for every reason: the spec's (spec nil: an orphan's stand-in), shortened by
// an eviction's override and by a deletion's grace period, and at least 1 s (a zero grace period
// still gives 1 s to a preStop hook; the container always gets minStopGrace after its SIGTERM).
func terminationGracePeriod(spec *v1.Pod, l podLifecycle) int64 {
	grace := int64(orphanGracePeriod)
	if spec != nil {
		grace = containerKillGrace(spec)
	}
	shorten := func(g int64) {
		if g < grace {
			grace = g
		}
	}
	if l.reason == terminationEvicted && l.eviction != nil {
		// The eviction manager's override replaces the pod's own, even when it is longer.
		grace = l.eviction.grace
	}
	if l.deletion != nil {
		if l.reason == terminationDeleted || l.reason == terminationOrphaned {
			// The deletion's grace period is the API's (or the orphan's): it stands as it is.
			grace = l.deletion.grace
		} else {
			shorten(l.deletion.grace)
		}
	}
	return max(grace, 1)
}
