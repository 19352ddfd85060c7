package eviction

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestReservation(t *testing.T) {
	capacity := v1.ResourceList{
		v1.ResourceMemory:           resource.MustParse("8Gi"),
		v1.ResourceEphemeralStorage: resource.MustParse("1001"),
		v1.ResourceCPU:              resource.MustParse("4"),
	}
	cases := []struct {
		spec           string
		memory, nodefs int64 // -1: not reserved
	}{
		// The kubelet's defaults: 100Mi of memory, 10% of nodefs (rounded down).
		{"", 100 << 20, 100},
		{"memory.available<1Gi", 1 << 30, -1},
		// Percentages are float32 fractions, as the kubelet keeps them.
		{"memory.available<5%,nodefs.available<200", 429496736, 200},
		// imagefs, inodes and pids reserve nothing in allocatable.
		{"imagefs.available<50%,nodefs.inodesFree<5%,pid.available<100", -1, -1},
		// A threshold of 0 is disabled.
		{"memory.available<0,nodefs.available<0%", -1, -1},
	}
	for _, tc := range cases {
		thresholds, err := ParseThresholds(tc.spec)
		if err != nil {
			t.Fatalf("%q: %v", tc.spec, err)
		}
		got := Reservation(thresholds, capacity)
		for name, want := range map[v1.ResourceName]int64{v1.ResourceMemory: tc.memory, v1.ResourceEphemeralStorage: tc.nodefs} {
			q, ok := got[name]
			switch {
			case want < 0 && ok:
				t.Errorf("%q: reserves %s of %s", tc.spec, q.String(), name)
			case want >= 0 && (!ok || q.Value() != want):
				t.Errorf("%q: reserves %v of %s, want %d", tc.spec, got[name], name, want)
			}
		}
		if _, ok := got[v1.ResourceCPU]; ok {
			t.Errorf("%q: reserves cpu", tc.spec)
		}
	}
}
