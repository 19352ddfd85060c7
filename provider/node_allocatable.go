package provider

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// NodeReservation is what the node keeps from its pods: the kubelet's --kube-reserved and
// --system-reserved, and the memory and ephemeral-storage its hard eviction thresholds keep
// free.
type NodeReservation struct {
	KubeReserved, SystemReserved v1.ResourceList
	// HardEviction gives, for the node's capacity, what the hard eviction thresholds on
	// memory.available and nodefs.available keep free (the kubelet's hardEvictionReservation);
	// nil: the kubelet's default thresholds, memory.available<100Mi and nodefs.available<10%.
	HardEviction func(capacity v1.ResourceList) v1.ResourceList
}

// The kubelet's default hard eviction thresholds that reserve resources.
const (
	defaultEvictionMemoryBytes   = 100 << 20
	defaultEvictionNodefsPercent = 10
)

// defaultHardEviction is what the kubelet's default hard eviction thresholds reserve.
func defaultHardEviction(capacity v1.ResourceList) v1.ResourceList {
	storage := capacity[v1.ResourceEphemeralStorage]
	return v1.ResourceList{
		v1.ResourceMemory: *resource.NewQuantity(defaultEvictionMemoryBytes, resource.BinarySI),
		// As the kubelet computes a percentage threshold: a float32 fraction of the capacity.
		v1.ResourceEphemeralStorage: *resource.NewQuantity(int64(float64(storage.Value())*float64(float32(defaultEvictionNodefsPercent)/100)), resource.BinarySI),
	}
}

// reserved is, for each resource of the capacity, the sum of what is kept from pods (the
// kubelet's GetNodeAllocatableReservation, pkg/kubelet/cm/node_container_manager_linux.go).
func (r NodeReservation) reserved(capacity v1.ResourceList) v1.ResourceList {
	hard := r.HardEviction
	if hard == nil {
		hard = defaultHardEviction
	}
	eviction := hard(capacity)
	out := v1.ResourceList{}
	for name := range capacity {
		sum := resource.NewQuantity(0, resource.DecimalSI)
		for _, list := range []v1.ResourceList{r.SystemReserved, r.KubeReserved, eviction} {
			if q, ok := list[name]; ok {
				sum.Add(q)
			}
		}
		if !sum.IsZero() {
			out[name] = *sum
		}
	}
	return out
}

// nodeAllocatable is the node's allocatable as the kubelet computes it (pkg/kubelet/nodestatus
// MachineInfo): capacity less the reservation, never negative, and memory less the hugepages'
// capacity. A reservation beyond the capacity is the error the kubelet refuses to start with
// (validateNodeAllocatable).
func nodeAllocatable(capacity v1.ResourceList, r NodeReservation) (v1.ResourceList, error) {
	reserved := r.reserved(capacity)
	var problems []string
	for _, name := range slices.Sorted(maps.Keys(reserved)) {
		c, q := capacity[name], reserved[name]
		if c.Cmp(q) < 0 {
			problems = append(problems, fmt.Sprintf("Resource %q has a reservation of %v but capacity of %v. Expected capacity >= reservation.", name, q.String(), c.String()))
		}
	}
	out := subtractFloored(capacity, reserved)
	for name, c := range capacity {
		if strings.HasPrefix(string(name), v1.ResourceHugePagesPrefix) {
			mem := out[v1.ResourceMemory]
			mem.Sub(c)
			if mem.Sign() < 0 {
				mem.Set(0)
			}
			out[v1.ResourceMemory] = mem
		}
	}
	if len(problems) > 0 {
		return out, fmt.Errorf("invalid Node Allocatable configuration. %s", strings.Join(problems, " "))
	}
	return out, nil
}

// Absolute is what the kubelet enforces on the kubepods cgroup with enforce-node-allocatable=pods:
// the capacity (pids included) less --system-reserved and --kube-reserved, never negative; the
// hard eviction thresholds are left out (pkg/kubelet/cm/node_container_manager_linux.go
// getNodeAllocatableAbsoluteImpl).
func (r NodeReservation) Absolute(capacity v1.ResourceList) v1.ResourceList {
	return subtractFloored(capacity, r.SystemReserved, r.KubeReserved)
}

// subtractFloored is, for each resource of the capacity, its quantity less the lists', floored
// at zero.
func subtractFloored(capacity v1.ResourceList, lists ...v1.ResourceList) v1.ResourceList {
	out := v1.ResourceList{}
	for name, c := range capacity {
		v := c.DeepCopy()
		for _, l := range lists {
			if q, ok := l[name]; ok {
				v.Sub(q)
			}
		}
		if v.Sign() < 0 {
			v.Set(0)
		}
		out[name] = v
	}
	return out
}
