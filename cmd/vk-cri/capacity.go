package main

import (
	"fmt"
	"maps"
	"slices"

	"github.com/spf13/pflag"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/vk-cri/vk-cri/provider"
)

// capacityOptions is --capacity: a node that declares less than the host has. The kubelet has
// no such flag (its capacity is the machine's); the name is that of the Node's status.capacity
// it sets, and the syntax that of --kube-reserved.
type capacityOptions struct {
	Capacity map[string]string
}

func (o *capacityOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringToStringVar(&o.Capacity, "capacity", o.Capacity, "the node's capacity where it is less than the host's, e.g. cpu=2,memory=4Gi,ephemeral-storage=20Gi: reported in the Node's capacity (allocatable is computed from it), enforced on the kubepods cgroup (memory limit, and a CPU quota), and the basis of memory.available and nodefs.available")
}

// declaredCapacity parses --capacity (cpu, memory, ephemeral-storage; positive quantities, cpu
// to the millicore); nil when not given.
func (o *capacityOptions) declaredCapacity() (v1.ResourceList, error) {
	if len(o.Capacity) == 0 {
		return nil, nil
	}
	out := v1.ResourceList{}
	for _, k := range slices.Sorted(maps.Keys(o.Capacity)) {
		name := v1.ResourceName(k)
		if !slices.Contains(provider.CapacityResources, name) {
			return nil, fmt.Errorf("--capacity: cannot declare %q (only %v)", k, provider.CapacityResources)
		}
		q, err := resource.ParseQuantity(o.Capacity[k])
		if err != nil {
			return nil, fmt.Errorf("--capacity: failed to parse quantity %q for %q: %w", o.Capacity[k], k, err)
		}
		if q.Sign() <= 0 {
			return nil, fmt.Errorf("--capacity: %s must be positive, not %v", k, o.Capacity[k])
		}
		if name == v1.ResourceCPU {
			q.SetMilli((q.ScaledValue(resource.Micro) + 500) / 1000)
		}
		out[name] = q
	}
	return out, nil
}
