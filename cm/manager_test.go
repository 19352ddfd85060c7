package cm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opencontainers/cgroups"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// fakeV1 is a cgroup v1 layout in a temporary directory (cpu, memory and pids hierarchies),
// written through the library in its test mode (no cgroupfs check, files created on write).
func fakeV1(t *testing.T) (*FS, string) {
	t.Helper()
	cgroups.TestMode = true
	t.Cleanup(func() { cgroups.TestMode = false })
	dir := t.TempDir()
	mounts := map[string]string{}
	for _, sub := range []string{"cpu", "memory", "pids"} {
		mounts[sub] = filepath.Join(dir, sub)
		if err := os.MkdirAll(mounts[sub], 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return &FS{Mounts: mounts}, dir
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	return strings.TrimSpace(string(b))
}

func testPod(uid string, spec v1.PodSpec) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: types.UID(uid)}, Spec: spec}
}

// A pod's cgroup gets the sum of its containers' limits, its QoS cgroup the shares of the
// Burstable pods' requests; a resize's steps and the removal reach the files.
func TestManagerOnCgroupV1Files(t *testing.T) {
	fs, dir := fakeV1(t)
	m := NewManager(fs, Options{Root: "/vk", Pod: PodOptions{EnforceCPULimits: true, CPUPeriod: QuotaPeriod, PodPidsLimit: 100}})
	if err := m.Start(NodeAllocatableConfig(rl("cpu", "2", "memory", "1Gi"), 32768, "")); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dir, "memory/vk/kubepods/memory.limit_in_bytes")); got != "1073741824" {
		t.Errorf("kubepods memory limit = %s", got)
	}
	if got := readFile(t, filepath.Join(dir, "pids/vk/kubepods/pids.max")); got != "32768" {
		t.Errorf("kubepods pids.max = %s", got)
	}
	if got := readFile(t, filepath.Join(dir, "cpu/vk/kubepods/besteffort/cpu.shares")); got != "2" {
		t.Errorf("besteffort shares = %s", got)
	}

	pod := testPod("u1", v1.PodSpec{Containers: []v1.Container{
		ctr("a", rl("cpu", "100m", "memory", "32Mi"), rl("cpu", "200m", "memory", "64Mi")),
		ctr("b", rl("cpu", "300m", "memory", "16Mi"), rl("cpu", "300m", "memory", "32Mi")),
	}})
	if err := m.EnsurePod(pod, []*v1.Pod{pod}); err != nil {
		t.Fatal(err)
	}
	podDir := "vk/kubepods/burstable/podu1"
	for file, want := range map[string]string{
		"memory/" + podDir + "/memory.limit_in_bytes": "100663296", // 64Mi + 32Mi
		"cpu/" + podDir + "/cpu.shares":               "409",
		"cpu/" + podDir + "/cpu.cfs_quota_us":         "50000",
		"cpu/" + podDir + "/cpu.cfs_period_us":        "100000",
		"pids/" + podDir + "/pids.max":                "100",
		"cpu/vk/kubepods/burstable/cpu.shares":        "409",
	} {
		if got := readFile(t, filepath.Join(dir, file)); got != want {
			t.Errorf("%s = %s, want %s", file, got, want)
		}
	}
	rc, err := m.ReadPod(pod)
	if err != nil {
		t.Fatal(err)
	}
	if r := ReadbackOf(rc); r.MemoryLimit.Value() != 96<<20 || r.CPULimit.MilliValue() != 500 || *r.Shares != 409 {
		t.Errorf("read back %v %v %v", r.MemoryLimit, r.CPULimit, *r.Shares)
	}

	// An existing pod cgroup is left alone by EnsurePod (only a resize changes it).
	bigger := pod.DeepCopy()
	bigger.Spec.Containers[0].Resources.Limits = rl("cpu", "200m", "memory", "128Mi")
	if err := m.EnsurePod(bigger, nil); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dir, "memory", podDir, "memory.limit_in_bytes")); got != "100663296" {
		t.Errorf("EnsurePod changed an existing pod cgroup: %s", got)
	}
	before, after := ResizeSteps(rc, PodResourceConfig(bigger, m.opts.Pod))
	if before == nil || after != nil {
		t.Fatalf("growing memory: before %+v after %+v", before, after)
	}
	if err := m.SetPod(bigger, before); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dir, "memory", podDir, "memory.limit_in_bytes")); got != "167772160" {
		t.Errorf("resized pod memory limit = %s", got)
	}

}

// fakeCgroups records which cgroups exist; Manager's bookkeeping is tested on it (rmdir of a
// temporary directory that holds files cannot be emulated).
type fakeCgroups struct{ dirs map[string]*ResourceConfig }

func (f *fakeCgroups) Exists(n CgroupName) bool { _, ok := f.dirs[n.ToCgroupfs()]; return ok }
func (f *fakeCgroups) Create(n CgroupName, rc *ResourceConfig) error {
	f.dirs[n.ToCgroupfs()] = rc
	return nil
}
func (f *fakeCgroups) Update(n CgroupName, rc *ResourceConfig) error { return f.Create(n, rc) }
func (f *fakeCgroups) Read(n CgroupName) (*ResourceConfig, error)    { return f.dirs[n.ToCgroupfs()], nil }
func (f *fakeCgroups) MemoryUsage(CgroupName) (int64, error)         { return 0, nil }
func (f *fakeCgroups) Destroy(n CgroupName) error {
	delete(f.dirs, n.ToCgroupfs())
	return nil
}
func (f *fakeCgroups) Children(n CgroupName) ([]string, error) {
	var out []string
	prefix := n.ToCgroupfs() + "/"
	for d := range f.dirs {
		if rest, ok := strings.CutPrefix(d, prefix); ok && !strings.Contains(rest, "/") {
			out = append(out, rest)
		}
	}
	return out, nil
}

func TestManagerOrphansAndDestroy(t *testing.T) {
	f := &fakeCgroups{dirs: map[string]*ResourceConfig{}}
	m := NewManager(f, Options{Root: "/vk", Pod: DefaultPodOptions()})
	if err := m.Start(&ResourceConfig{}); err != nil {
		t.Fatal(err)
	}
	live := testPod("u1", v1.PodSpec{Containers: []v1.Container{ctr("a", rl("cpu", "1", "memory", "1Mi"), rl("cpu", "1", "memory", "1Mi"))}})
	gone := testPod("u2", v1.PodSpec{Containers: []v1.Container{ctr("a", nil, nil)}})
	for _, p := range []*v1.Pod{live, gone} {
		if err := m.EnsurePod(p, []*v1.Pod{live, gone}); err != nil {
			t.Fatal(err)
		}
	}
	if !f.Exists(ParseCgroupfs("/vk/kubepods/podu1")) || !f.Exists(ParseCgroupfs("/vk/kubepods/besteffort/podu2")) {
		t.Fatalf("pod cgroups not where the kubelet puts them: %v", f.dirs)
	}
	removed, err := m.CleanupOrphans(func(uid types.UID) bool { return uid == "u1" })
	if err != nil || len(removed) != 1 || removed[0] != "u2" {
		t.Fatalf("orphans removed %v (%v), want [u2]", removed, err)
	}
	if m.PodExists(gone) || !m.PodExists(live) {
		t.Errorf("after the orphan cleanup: %v", f.dirs)
	}
	if err := m.DestroyPod("u1"); err != nil {
		t.Fatal(err)
	}
	if m.PodExists(live) || !f.Exists(m.layout.QOS(v1.PodQOSBurstable)) {
		t.Errorf("after DestroyPod: %v", f.dirs)
	}
}

// On cgroup v2 the same settings are memory.max, cpu.max and cpu.weight; memory.max "max" and
// cpu.max "max" read back as no limit.
func TestFSOnCgroupV2Files(t *testing.T) {
	cgroups.TestMode = true
	t.Cleanup(func() { cgroups.TestMode = false })
	dir := t.TempDir()
	fs := &FS{V2: true, Mounts: map[string]string{"": dir}}
	name := ParseCgroupfs("/kubepods/burstable/podu")
	if err := os.MkdirAll(filepath.Join(dir, name.ToCgroupfs()), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name.ToCgroupfs(), "cgroup.controllers"), []byte("cpu memory pids\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pod := testPod("u", v1.PodSpec{Containers: []v1.Container{ctr("a", rl("cpu", "250m", "memory", "32Mi"), rl("cpu", "500m", "memory", "64Mi"))}})
	opts := DefaultPodOptions()
	opts.PodPidsLimit = 256
	if err := fs.Update(name, PodResourceConfig(pod, opts)); err != nil {
		t.Fatal(err)
	}
	podDir := filepath.Join(dir, name.ToCgroupfs())
	for file, want := range map[string]string{"memory.max": "67108864", "cpu.max": "50000 100000", "cpu.weight": "10", "pids.max": "256"} {
		if got := readFile(t, filepath.Join(podDir, file)); got != want {
			t.Errorf("%s = %q, want %q", file, got, want)
		}
	}
	rc, err := fs.Read(name)
	if err != nil {
		t.Fatal(err)
	}
	if r := ReadbackOf(rc); r.MemoryLimit.Value() != 64<<20 || r.CPULimit.MilliValue() != 500 || *r.Shares != int64(WeightToShares(SharesToWeight(256))) {
		t.Errorf("v2 read back %v %v %v", r.MemoryLimit, r.CPULimit, *r.Shares)
	}
	// The QoS manager's start-up values on v2: Burstable's memory.low reset to 0.
	configs, _ := QOSCreateConfigs(nil, true)
	if err := fs.Update(name, configs[v1.PodQOSBurstable]); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(podDir, "memory.low")); got != "0" {
		t.Errorf("memory.low = %q, want 0", got)
	}
	for file, content := range map[string]string{"memory.max": "max", "cpu.max": "max 100000"} {
		if err := os.WriteFile(filepath.Join(podDir, file), []byte(content+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rc, err = fs.Read(name)
	if err != nil {
		t.Fatal(err)
	}
	if r := ReadbackOf(rc); r.MemoryLimit != nil || r.CPULimit != nil {
		t.Errorf("unlimited v2 cgroup reads back limits: %v %v", r.MemoryLimit, r.CPULimit)
	}
}
