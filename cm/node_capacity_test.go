package cm

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestNodeCapacityLimits(t *testing.T) {
	alloc := v1.ResourceList{v1.ResourceCPU: resource.MustParse("1500m"), v1.ResourceMemory: resource.MustParse("1Gi")}
	rc := NodeCapacityLimits(NodeAllocatableConfig(alloc, 1000, "0-3"), v1.ResourceList{v1.ResourceCPU: resource.MustParse("1500m")})
	if rc.CPUQuota == nil || *rc.CPUQuota != 150000 || rc.CPUPeriod == nil || *rc.CPUPeriod != 100000 {
		t.Errorf("quota %v period %v, want 150000/100000", rc.CPUQuota, rc.CPUPeriod)
	}
	if rc.Memory == nil || *rc.Memory != 1<<30 {
		t.Errorf("memory %v", rc.Memory)
	}
	// Without a declared cpu, no quota: the kubelet's kubepods.
	rc = NodeCapacityLimits(NodeAllocatableConfig(alloc, 1000, "0-3"), v1.ResourceList{v1.ResourceMemory: resource.MustParse("1Gi")})
	if rc.CPUQuota != nil {
		t.Errorf("quota %v without a declared cpu", *rc.CPUQuota)
	}
}
