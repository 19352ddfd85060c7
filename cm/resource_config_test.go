package cm

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func rl(pairs ...string) v1.ResourceList {
	out := v1.ResourceList{}
	for i := 0; i+1 < len(pairs); i += 2 {
		out[v1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return out
}

func ctr(name string, req, lim v1.ResourceList) v1.Container {
	return v1.Container{Name: name, Resources: v1.ResourceRequirements{Requests: req, Limits: lim}}
}

func p64[T any](v T) *T { return &v }

// want is a pod cgroup's expected settings: nil pointers are "not set".
type want struct {
	shares    uint64
	quota     *int64
	period    *uint64
	memory    *int64
	pids      *int64
	hugePages map[int64]int64
}

func TestPodResourceConfig(t *testing.T) {
	always := v1.ContainerRestartPolicyAlways
	mi := int64(1 << 20)
	period := uint64(QuotaPeriod)
	cases := []struct {
		name string
		spec v1.PodSpec
		opts PodOptions
		want want
	}{
		{
			name: "guaranteed: shares, quota and memory from the sums",
			spec: v1.PodSpec{Containers: []v1.Container{
				ctr("a", rl("cpu", "100m", "memory", "64Mi"), rl("cpu", "100m", "memory", "64Mi")),
				ctr("b", rl("cpu", "250m", "memory", "32Mi"), rl("cpu", "250m", "memory", "32Mi")),
			}},
			want: want{shares: 358, quota: p64(int64(35000)), period: &period, memory: p64(96 * mi)},
		},
		{
			name: "burstable with every limit: quota and memory limit",
			spec: v1.PodSpec{Containers: []v1.Container{
				ctr("a", rl("cpu", "100m", "memory", "16Mi"), rl("cpu", "500m", "memory", "64Mi")),
				// requests defaulted from the limits, as the API server stores them
				ctr("b", rl("cpu", "1", "memory", "32Mi"), rl("cpu", "1", "memory", "32Mi")),
			}},
			want: want{shares: 1126, quota: p64(int64(150000)), period: &period, memory: p64(96 * mi)},
		},
		{
			name: "burstable, one container without a memory limit: no memory limit, quota kept",
			spec: v1.PodSpec{Containers: []v1.Container{
				ctr("a", rl("cpu", "100m"), rl("cpu", "200m", "memory", "64Mi")),
				ctr("b", rl("cpu", "100m"), rl("cpu", "200m")),
			}},
			want: want{shares: 204, quota: p64(int64(40000)), period: &period},
		},
		{
			name: "burstable with requests only: shares only",
			spec: v1.PodSpec{Containers: []v1.Container{ctr("a", rl("cpu", "1500m", "memory", "1Gi"), nil)}},
			want: want{shares: 1536},
		},
		{
			name: "besteffort: the minimum shares",
			spec: v1.PodSpec{Containers: []v1.Container{ctr("a", nil, nil), ctr("b", nil, nil)}},
			want: want{shares: MinShares},
		},
		{
			name: "an init container larger than the regular ones sets the pod's values",
			spec: v1.PodSpec{
				InitContainers: []v1.Container{ctr("init", rl("cpu", "2", "memory", "256Mi"), rl("cpu", "2", "memory", "256Mi"))},
				Containers:     []v1.Container{ctr("a", rl("cpu", "500m", "memory", "64Mi"), rl("cpu", "500m", "memory", "64Mi"))},
			},
			want: want{shares: 2048, quota: p64(int64(200000)), period: &period, memory: p64(256 * mi)},
		},
		{
			name: "a sidecar adds to the regular containers",
			spec: v1.PodSpec{
				InitContainers: []v1.Container{{Name: "side", RestartPolicy: &always, Resources: v1.ResourceRequirements{
					Requests: rl("cpu", "100m", "memory", "16Mi"), Limits: rl("cpu", "100m", "memory", "16Mi")}}},
				Containers: []v1.Container{ctr("a", rl("cpu", "500m", "memory", "64Mi"), rl("cpu", "500m", "memory", "64Mi"))},
			},
			want: want{shares: 614, quota: p64(int64(60000)), period: &period, memory: p64(80 * mi)},
		},
		{
			name: "pod-level memory limit, containers without any: burstable, the pod's limit, no quota",
			spec: v1.PodSpec{
				Resources:  &v1.ResourceRequirements{Requests: rl("memory", "64Mi"), Limits: rl("memory", "64Mi")},
				Containers: []v1.Container{ctr("a", nil, nil), ctr("b", nil, nil)},
			},
			want: want{shares: MinShares, memory: p64(64 * mi)},
		},
		{
			name: "pod-level cpu and memory: guaranteed from the pod's values over the containers'",
			spec: v1.PodSpec{
				Resources: &v1.ResourceRequirements{Requests: rl("cpu", "1", "memory", "128Mi"), Limits: rl("cpu", "1", "memory", "128Mi")},
				Containers: []v1.Container{
					ctr("a", rl("cpu", "200m", "memory", "32Mi"), rl("cpu", "200m", "memory", "32Mi")), ctr("b", nil, nil)},
			},
			want: want{shares: 1024, quota: p64(int64(100000)), period: &period, memory: p64(128 * mi)},
		},
		{
			name: "pids limit and huge pages",
			spec: v1.PodSpec{Containers: []v1.Container{ctr("a",
				rl("cpu", "1", "memory", "64Mi", "hugepages-2Mi", "4Mi"), rl("cpu", "1", "memory", "64Mi", "hugepages-2Mi", "4Mi"))}},
			opts: PodOptions{EnforceCPULimits: true, CPUPeriod: QuotaPeriod, PodPidsLimit: 1024},
			want: want{shares: 1024, quota: p64(int64(100000)), period: &period, memory: p64(64 * mi), pids: p64(int64(1024)), hugePages: map[int64]int64{2 * mi: 4 * mi}},
		},
		{
			name: "cpu-cfs-quota off: quota -1",
			spec: v1.PodSpec{Containers: []v1.Container{ctr("a", rl("cpu", "1", "memory", "64Mi"), rl("cpu", "1", "memory", "64Mi"))}},
			opts: PodOptions{EnforceCPULimits: false, CPUPeriod: QuotaPeriod},
			want: want{shares: 1024, quota: p64(int64(-1)), period: &period, memory: p64(64 * mi)},
		},
		{
			name: "a tiny cpu limit gets the 1 ms minimum quota",
			spec: v1.PodSpec{Containers: []v1.Container{ctr("a", rl("cpu", "1m", "memory", "8Mi"), rl("cpu", "1m", "memory", "8Mi"))}},
			want: want{shares: MinShares, quota: p64(int64(MinQuotaValue)), period: &period, memory: p64(8 * mi)},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			if opts == (PodOptions{}) {
				opts = DefaultPodOptions()
			}
			got := PodResourceConfig(&v1.Pod{Spec: tc.spec}, opts)
			if got.CPUShares == nil || *got.CPUShares != tc.want.shares {
				t.Errorf("shares = %v, want %d", deref(got.CPUShares), tc.want.shares)
			}
			checkPtr(t, "quota", got.CPUQuota, tc.want.quota)
			checkPtr(t, "period", got.CPUPeriod, tc.want.period)
			checkPtr(t, "memory", got.Memory, tc.want.memory)
			checkPtr(t, "pids", got.PidsLimit, tc.want.pids)
			if len(got.HugePageLimit) != len(tc.want.hugePages) {
				t.Errorf("huge pages = %v, want %v", got.HugePageLimit, tc.want.hugePages)
			}
			for k, v := range tc.want.hugePages {
				if got.HugePageLimit[k] != v {
					t.Errorf("huge pages[%d] = %d, want %d", k, got.HugePageLimit[k], v)
				}
			}
		})
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return "<nil>"
	}
	return *p
}

func checkPtr[T comparable](t *testing.T, what string, got, want *T) {
	t.Helper()
	switch {
	case got == nil && want == nil:
	case got == nil || want == nil || *got != *want:
		t.Errorf("%s = %v, want %v", what, deref(got), deref(want))
	}
}

func TestQOSResourceConfigs(t *testing.T) {
	pods := []*v1.Pod{
		{Spec: v1.PodSpec{Containers: []v1.Container{ctr("a", rl("cpu", "100m"), nil)}}},                                                  // burstable
		{Spec: v1.PodSpec{Containers: []v1.Container{ctr("a", rl("cpu", "250m", "memory", "1Mi"), rl("memory", "2Mi"))}}},                 // burstable
		{Spec: v1.PodSpec{Containers: []v1.Container{ctr("a", rl("cpu", "2", "memory", "1Mi"), rl("cpu", "2", "memory", "1Mi"))}}},        // guaranteed: not counted
		{Spec: v1.PodSpec{Containers: []v1.Container{ctr("a", nil, nil)}}},                                                                // besteffort
		{Spec: v1.PodSpec{Resources: &v1.ResourceRequirements{Requests: rl("cpu", "1")}, Containers: []v1.Container{ctr("a", nil, nil)}}}, // burstable by its pod-level request
	}
	got := QOSResourceConfigs(pods, []int64{2 << 20})
	if s := *got[v1.PodQOSBurstable].CPUShares; s != MilliCPUToShares(1350) {
		t.Errorf("burstable shares = %d, want %d", s, MilliCPUToShares(1350))
	}
	if s := *got[v1.PodQOSBestEffort].CPUShares; s != MinShares {
		t.Errorf("besteffort shares = %d, want %d", s, MinShares)
	}
	if got[v1.PodQOSGuaranteed].CPUShares != nil || got[v1.PodQOSGuaranteed].Memory != nil {
		t.Errorf("kubepods is given cpu or memory settings: %+v", got[v1.PodQOSGuaranteed])
	}
	for class, rc := range got {
		if rc.Memory != nil {
			t.Errorf("%s: memory limit %d without QOSReserved", class, *rc.Memory)
		}
		if rc.HugePageLimit[2<<20] != hugePagesUnbounded {
			t.Errorf("%s: huge pages %v, want unbounded", class, rc.HugePageLimit)
		}
	}
	if s := *QOSResourceConfigs(nil, nil)[v1.PodQOSBurstable].CPUShares; s != MinShares {
		t.Errorf("burstable shares without pods = %d, want %d", s, MinShares)
	}
}

func TestQOSCreateConfigs(t *testing.T) {
	v1c, root := QOSCreateConfigs(nil, false)
	if root != nil || v1c[v1.PodQOSBurstable].Unified != nil || *v1c[v1.PodQOSBestEffort].CPUShares != MinShares || v1c[v1.PodQOSBurstable].CPUShares != nil {
		t.Errorf("cgroup v1 start-up configs: %+v %+v root %v", v1c[v1.PodQOSBurstable], v1c[v1.PodQOSBestEffort], root)
	}
	v2c, root := QOSCreateConfigs(nil, true)
	if v2c[v1.PodQOSBurstable].Unified[memoryLow] != "0" || root[memoryMin] != "0" || root[memoryLow] != "0" {
		t.Errorf("cgroup v2 start-up configs: burstable %v root %v", v2c[v1.PodQOSBurstable].Unified, root)
	}
}

func TestNodeAllocatableConfig(t *testing.T) {
	rc := NodeAllocatableConfig(rl("cpu", "2", "memory", "8Gi"), 4194304, "0-1")
	if *rc.Memory != 8<<30 || *rc.CPUShares != 2048 || *rc.PidsLimit != 4194304 || rc.CPUSet != "0-1" {
		t.Errorf("kubepods = memory %d shares %d pids %d cpuset %q", *rc.Memory, *rc.CPUShares, *rc.PidsLimit, rc.CPUSet)
	}
}

// The kubelet's conversions (cgroup_manager_linux_test.go, helpers_linux_test.go values).
func TestConversions(t *testing.T) {
	for _, c := range []struct{ shares, weight uint64 }{{2, 1}, {1024, 39}, {262144, 10000}, {100000, 3815}} {
		if w := SharesToWeight(c.shares); w != c.weight {
			t.Errorf("SharesToWeight(%d) = %d, want %d", c.shares, w, c.weight)
		}
	}
	if s := WeightToShares(39); s != 998 {
		t.Errorf("WeightToShares(39) = %d, want 998", s)
	}
	if MilliCPUToShares(0) != 2 || MilliCPUToShares(1) != 2 || MilliCPUToShares(1000) != 1024 || MilliCPUToShares(1000000) != MaxShares {
		t.Error("MilliCPUToShares bounds")
	}
	if MilliCPUToQuota(0, QuotaPeriod) != 0 || MilliCPUToQuota(5, QuotaPeriod) != MinQuotaValue || MilliCPUToQuota(1500, QuotaPeriod) != 150000 {
		t.Error("MilliCPUToQuota")
	}
}

func TestReadbackOf(t *testing.T) {
	r := ReadbackOf(&ResourceConfig{Memory: p64(int64(64 << 20)), CPUShares: p64(uint64(102)), CPUQuota: p64(int64(10000)), CPUPeriod: p64(uint64(100000))})
	if r.MemoryLimit.Value() != 64<<20 || *r.Shares != 102 || r.CPULimit.MilliValue() != 100 {
		t.Errorf("readback = %v %v %v", r.MemoryLimit, *r.Shares, r.CPULimit)
	}
	r = ReadbackOf(&ResourceConfig{Memory: p64(int64(-1)), CPUShares: p64(uint64(2)), CPUQuota: p64(int64(-1)), CPUPeriod: p64(uint64(100000))})
	if r.MemoryLimit != nil || r.CPULimit != nil {
		t.Errorf("unlimited cgroup reads back limits: %v %v", r.MemoryLimit, r.CPULimit)
	}
}

func TestResizeSteps(t *testing.T) {
	cur := &ResourceConfig{Memory: p64(int64(64 << 20)), CPUShares: p64(uint64(102)), CPUQuota: p64(int64(10000)), CPUPeriod: p64(uint64(QuotaPeriod))}
	cases := []struct {
		name          string
		desired       *ResourceConfig
		before, after *ResourceConfig
	}{
		{"memory down: after the containers", &ResourceConfig{Memory: p64(int64(32 << 20)), CPUShares: p64(uint64(102)), CPUQuota: p64(int64(10000))},
			nil, &ResourceConfig{Memory: p64(int64(32 << 20))}},
		{"memory and cpu up: before", &ResourceConfig{Memory: p64(int64(128 << 20)), CPUShares: p64(uint64(204)), CPUQuota: p64(int64(20000))},
			&ResourceConfig{Memory: p64(int64(128 << 20)), CPUShares: p64(uint64(204)), CPUQuota: p64(int64(20000)), CPUPeriod: p64(uint64(QuotaPeriod))}, nil},
		{"cpu up, memory down: split", &ResourceConfig{Memory: p64(int64(32 << 20)), CPUShares: p64(uint64(204)), CPUQuota: p64(int64(20000))},
			&ResourceConfig{CPUShares: p64(uint64(204)), CPUQuota: p64(int64(20000)), CPUPeriod: p64(uint64(QuotaPeriod))}, &ResourceConfig{Memory: p64(int64(32 << 20))}},
		{"no limit asked: the current ones stay", &ResourceConfig{CPUShares: p64(uint64(102))}, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, a := ResizeSteps(cur, tc.desired)
			sameConfig(t, "before", b, tc.before)
			sameConfig(t, "after", a, tc.after)
		})
	}
}

func sameConfig(t *testing.T, what string, got, want *ResourceConfig) {
	t.Helper()
	if (got == nil) != (want == nil) {
		t.Fatalf("%s = %+v, want %+v", what, got, want)
	}
	if got == nil {
		return
	}
	checkPtr(t, what+" memory", got.Memory, want.Memory)
	checkPtr(t, what+" shares", got.CPUShares, want.CPUShares)
	checkPtr(t, what+" quota", got.CPUQuota, want.CPUQuota)
	checkPtr(t, what+" period", got.CPUPeriod, want.CPUPeriod)
}
