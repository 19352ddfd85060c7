package provider

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

// Allocatable as the kubelet computes it: capacity less kube-reserved, system-reserved and what
// the hard eviction thresholds keep, memory less hugepages too.
func TestNodeAllocatable(t *testing.T) {
	capacity := rl("cpu", "4", "memory", "8Gi", "ephemeral-storage", "100Gi", "pods", "110", "hugepages-2Mi", "0", "hugepages-1Gi", "0")
	evictionHard := func(list v1.ResourceList) func(v1.ResourceList) v1.ResourceList {
		return func(v1.ResourceList) v1.ResourceList { return list }
	}
	cases := []struct {
		name     string
		capacity v1.ResourceList
		r        NodeReservation
		want     v1.ResourceList
		wantErr  string
	}{
		// What the reference kubelet v1.37.2 reports on the test machine: 10% is its float32
		// fraction of the capacity, 403 bytes more than a tenth.
		{name: "kubelet defaults, as the kubelet reports them", capacity: rl("memory", "24731184Ki", "ephemeral-storage", "270553174016"),
			want: rl("memory", "24628784Ki", "ephemeral-storage", "243497856212")},
		{name: "kubelet defaults", capacity: capacity,
			want: rl("cpu", "4", "memory", "8092Mi", "ephemeral-storage", "96636764000", "pods", "110", "hugepages-2Mi", "0", "hugepages-1Gi", "0")},
		{name: "kube and system reserved added to the thresholds", capacity: capacity, r: NodeReservation{
			KubeReserved:   rl("cpu", "100m", "memory", "256Mi", "ephemeral-storage", "1Gi"),
			SystemReserved: rl("cpu", "400m", "memory", "768Mi", "pid", "1000"),
			HardEviction:   evictionHard(rl("memory", "1Gi", "ephemeral-storage", "9Gi")),
		}, want: rl("cpu", "3500m", "memory", "6Gi", "ephemeral-storage", "90Gi", "pods", "110", "hugepages-2Mi", "0", "hugepages-1Gi", "0")},
		{name: "no eviction thresholds", capacity: capacity, r: NodeReservation{HardEviction: evictionHard(nil)},
			want: capacity},
		{name: "hugepages come out of memory", capacity: rl("cpu", "4", "memory", "8Gi", "hugepages-2Mi", "1Gi"), r: NodeReservation{HardEviction: evictionHard(nil)},
			want: rl("cpu", "4", "memory", "7Gi", "hugepages-2Mi", "1Gi")},
		{name: "reservation beyond capacity", capacity: capacity, r: NodeReservation{KubeReserved: rl("cpu", "3"), SystemReserved: rl("cpu", "2")},
			want:    rl("cpu", "0", "memory", "8092Mi", "ephemeral-storage", "96636764000", "pods", "110", "hugepages-2Mi", "0", "hugepages-1Gi", "0"),
			wantErr: `invalid Node Allocatable configuration. Resource "cpu" has a reservation of 5 but capacity of 4. Expected capacity >= reservation.`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := nodeAllocatable(tc.capacity, tc.r)
			if gotErr := errString(err); gotErr != tc.wantErr {
				t.Errorf("error %q, want %q", gotErr, tc.wantErr)
			}
			if len(got) != len(tc.want) {
				t.Errorf("allocatable %v, want %v", got, tc.want)
			}
			for name, w := range tc.want {
				if g := got[name]; g.Cmp(w) != 0 {
					t.Errorf("allocatable %s = %s, want %s", name, g.String(), w.String())
				}
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// What the kubepods cgroup carries: capacity less kube- and system-reserved (pids too), the hard
// eviction thresholds left out, as the kubelet's getNodeAllocatableAbsoluteImpl.
func TestNodeReservationAbsoluteLeavesEvictionOut(t *testing.T) {
	r := NodeReservation{
		KubeReserved:   rl("cpu", "100m", "memory", "256Mi"),
		SystemReserved: rl("cpu", "400m", "memory", "768Mi", "pid", "1000"),
		HardEviction:   func(v1.ResourceList) v1.ResourceList { return rl("memory", "1Gi") },
	}
	got := r.Absolute(rl("cpu", "4", "memory", "8Gi", "pid", "4194304"))
	want := rl("cpu", "3500m", "memory", "7Gi", "pid", "4193304")
	for name, q := range want {
		if g := got[name]; g.Cmp(q) != 0 {
			t.Errorf("%s: got %s, want %s", name, g.String(), q.String())
		}
	}
	if small := r.Absolute(rl("cpu", "200m")); small.Cpu().Sign() != 0 {
		t.Errorf("cpu below the reservation: got %s, want 0", small.Cpu())
	}
}
