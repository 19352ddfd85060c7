package cm

import (
	"os"
	"path/filepath"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// On a host with systemd and cgroup v2 (the VM lane's guest: VKCRI_TEST_SYSTEMD_CGROUPS=1, as
// hack/vm/test-vm.sh runs it), the manager makes the kubepods, QoS and pod slices through
// systemd with the kubelet's v2 values, reads them back, and the orphan sweep removes a pod slice.
func TestSystemdDriverOnThisHost(t *testing.T) {
	if os.Getenv("VKCRI_TEST_SYSTEMD_CGROUPS") != "1" {
		t.Skip("needs systemd on cgroup v2 (VKCRI_TEST_SYSTEMD_CGROUPS=1, in the VM lane)")
	}
	fs := HostFS(DriverSystemd)
	if !fs.V2 {
		t.Fatal("this host is not on cgroup v2")
	}
	m := NewManager(fs, Options{Root: "/vktest", Pod: DefaultPodOptions(), V2: true})
	mem := int64(512 << 20)
	if err := m.Start(&ResourceConfig{Memory: &mem}); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		for _, class := range []v1.PodQOSClass{v1.PodQOSBurstable, v1.PodQOSBestEffort, v1.PodQOSGuaranteed} {
			_ = m.destroy(m.layout.QOS(class))
		}
		_ = m.destroy(CgroupName{"vktest"})
	})
	const mount = "/sys/fs/cgroup"
	if b, err := os.ReadFile(filepath.Join(mount, "vktest.slice/vktest-kubepods.slice/memory.max")); err != nil || string(b) != "536870912\n" {
		t.Errorf("kubepods memory.max = %q (%v)", b, err)
	}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID("1234-abcd")}, Spec: v1.PodSpec{Containers: []v1.Container{
		ctr("a", rl("cpu", "100m", "memory", "32Mi"), rl("cpu", "200m", "memory", "64Mi"))}}}
	if err := m.EnsurePod(pod, []*v1.Pod{pod}); err != nil {
		t.Fatalf("EnsurePod: %v", err)
	}
	dir := filepath.Join(mount, "vktest.slice/vktest-kubepods.slice/vktest-kubepods-burstable.slice/vktest-kubepods-burstable-pod1234_abcd.slice")
	for file, want := range map[string]string{"memory.max": "67108864\n", "cpu.max": "20000 100000\n", "cpu.weight": "4\n"} {
		if b, err := os.ReadFile(filepath.Join(dir, file)); err != nil || string(b) != want {
			t.Errorf("pod slice %s = %q (%v), want %q", file, b, err, want)
		}
	}
	rc, err := m.ReadPod(pod)
	if err != nil || *rc.Memory != 64<<20 || *rc.CPUQuota != 20000 || *rc.CPUShares != WeightToShares(4) {
		t.Fatalf("ReadPod = %+v (%v)", rc, err)
	}
	removed, err := m.CleanupOrphans(func(types.UID) bool { return false })
	if err != nil || len(removed) != 1 || removed[0] != "1234-abcd" {
		t.Fatalf("CleanupOrphans = %v (%v), want [1234-abcd]", removed, err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("pod slice %s still there after the sweep (%v)", dir, err)
	}
}
