package provider

import v1 "k8s.io/api/core/v1"

// orphanGracePeriod is the grace period the kubelet gives the containers of a pod it finds in
// the runtime and that the API does not have (force-deleted while the kubelet was down): it
// kills such an orphan with a 1 s override, so each container gets the minStopGrace minimum.
// It knows nothing more of the pod than the runtime's names, so no preStop hook runs either.
const orphanGracePeriod = 1

// deletionRequest is what decides how a pod is torn down.
type deletionRequest struct {
	// Spec is the pod as the API gave it to vk-cri; nil for an orphan, found in the runtime at
	// start-up and never claimed by the API.
	Spec *v1.Pod
	// Deleted is the pod the deletion came with, if any (with its deletion timestamp and grace
	// period when the API deletes it).
	Deleted *v1.Pod
}

// orphan reports whether the pod is one vk-cri only knows from the runtime.
func (d deletionRequest) orphan() bool {
	return d.Spec == nil && (d.Deleted == nil || d.Deleted.DeletionTimestamp == nil)
}

// gracePeriod is the grace period of the pod's termination, as the kubelet picks it: the API's
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

// killingEvents reports whether stopping the pod's containers records Killing events, as with
// the kubelet: not for a pod force-deleted from the API while vk-cri ran it (grace 0, or removed
// from the API before its termination began), but for an orphan, which the kubelet kills
// through a stand-in pod made of the runtime's names and so reports.
func killingEvents(orphan bool, grace int64, goneFromAPI, deletedInAPI bool) bool {
	if orphan {
		return true
	}
	return !(grace == 0 || (goneFromAPI && !deletedInAPI))
}
