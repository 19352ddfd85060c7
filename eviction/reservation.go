package eviction

import (
	v1 "k8s.io/api/core/v1"
)

// Reservation is what the hard thresholds keep from pods in the node's allocatable, as the
// kubelet's hardEvictionReservation (pkg/kubelet/cm/helpers.go) computes it: memory.available's
// amount of memory and nodefs.available's amount of ephemeral-storage, each against the node's
// capacity of it. The other signals reserve nothing.
func Reservation(thresholds []Threshold, capacity v1.ResourceList) v1.ResourceList {
	out := v1.ResourceList{}
	for _, t := range thresholds {
		var name v1.ResourceName
		switch t.Signal {
		case MemoryAvailable:
			name = v1.ResourceMemory
		case NodeFsAvailable:
			name = v1.ResourceEphemeralStorage
		default:
			continue
		}
		c := capacity[name]
		out[name] = t.value(&c).DeepCopy()
	}
	return out
}
