package provider

import v1 "k8s.io/api/core/v1"

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

// killingEvents reports whether stopping the pod's containers records Killing events, as with
// the kubelet: whenever it terminates a pod it saw deleted in the API, whatever the grace period
// (a deletion with grace 0 is a change of the pod, with its deletion timestamp, before its
// removal), and for an orphan, which it kills through a stand-in pod made of the runtime's names;
// not for a pod that left the API without vk-cri ever seeing it deleted there.
func killingEvents(orphan, goneFromAPI, deletedInAPI bool) bool {
	return orphan || deletedInAPI || !goneFromAPI
}

// newDeletion reports whether the API's pod asks for more than the deletion under way (if any)
// already does: a deletion not yet requested through the API, or a shorter grace period.
func newDeletion(api *v1.Pod, under *podDeletion) bool {
	if api.DeletionTimestamp == nil {
		return false
	}
	if under == nil || !under.inAPI {
		return true
	}
	return api.DeletionGracePeriodSeconds != nil && *api.DeletionGracePeriodSeconds < under.grace
}
