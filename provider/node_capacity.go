package provider

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
)

// CapacityResources are the resources a node's declared capacity (NodeOptions.Capacity,
// --capacity) may set.
var CapacityResources = []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage}

// declareCapacity makes the host's facts those of a node smaller than the host: each resource
// of declared replaces the host's, which it must not exceed (a node that promises more than the
// machine has is what per-node capacity exists to prevent).
func (h *hostFacts) declareCapacity(declared v1.ResourceList) error {
	if len(declared) == 0 {
		return nil
	}
	host, _, err := h.resources(1, NodeReservation{})
	if err != nil {
		return err
	}
	for name, q := range declared {
		hq, ok := host[name]
		if !ok {
			return fmt.Errorf("--capacity: %q is not a resource the node's capacity can declare", name)
		}
		if q.Cmp(hq) > 0 {
			return fmt.Errorf("--capacity: %s=%s exceeds the host's %s", name, q.String(), hq.String())
		}
		if q.Sign() <= 0 {
			return fmt.Errorf("--capacity: %s must be positive", name)
		}
	}
	h.Declared = declared.DeepCopy()
	if q, ok := declared[v1.ResourceMemory]; ok {
		h.MemoryBytes = q.Value()
	}
	if q, ok := declared[v1.ResourceEphemeralStorage]; ok {
		h.StorageBytes = q.Value()
	}
	return nil
}

// applyDeclared sets the declared resources in a capacity list (cpu may be fractional, which
// the host's CPU count is not).
func applyDeclared(capacity, declared v1.ResourceList) {
	for name, q := range declared {
		capacity[name] = q.DeepCopy()
	}
}
