package provider

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestDeclaredCapacity(t *testing.T) {
	host := func() hostFacts { return hostFacts{CPUs: 4, MemoryBytes: 16 << 30, StorageBytes: 100 << 30} }
	h := host()
	declared := v1.ResourceList{v1.ResourceCPU: resource.MustParse("1500m"), v1.ResourceMemory: resource.MustParse("1Gi")}
	if err := h.declareCapacity(declared); err != nil {
		t.Fatal(err)
	}
	capacity, allocatable, err := h.resources(110, NodeReservation{KubeReserved: v1.ResourceList{v1.ResourceMemory: resource.MustParse("100Mi")}})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[v1.ResourceName]string{v1.ResourceCPU: "1500m", v1.ResourceMemory: "1Gi", v1.ResourceEphemeralStorage: "100Gi"} {
		if q := capacity[name]; q.String() != want {
			t.Errorf("capacity %s = %s, want %s", name, q.String(), want)
		}
	}
	// Allocatable is computed from the declared capacity: 1Gi less 100Mi reserved, less the
	// default hard eviction threshold of 100Mi.
	if q := allocatable[v1.ResourceMemory]; q.Value() != (1<<30)-200<<20 {
		t.Errorf("allocatable memory = %s", q.String())
	}
	if h.MemoryBytes != 1<<30 {
		t.Errorf("the node's memory is %d", h.MemoryBytes)
	}
	for _, tc := range []struct {
		declared v1.ResourceList
		err      string
	}{
		{v1.ResourceList{v1.ResourceMemory: resource.MustParse("32Gi")}, "exceeds the host's"},
		{v1.ResourceList{v1.ResourceCPU: resource.MustParse("8")}, "exceeds the host's"},
		{v1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}, "not a resource"},
	} {
		h := host()
		if err := h.declareCapacity(tc.declared); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%v: error %v, want %q", tc.declared, err, tc.err)
		}
	}
}
