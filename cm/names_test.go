package cm

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

// The kubelet's documented examples (cgroup_manager_linux.go ToSystemd, pod_container_manager
// and the node-allocatable docs: kubepods.slice, kubepods-burstable.slice,
// kubepods-burstable-pod<uid>.slice with '-' in the uid escaped as '_').
func TestNames(t *testing.T) {
	l := Layout{Root: ParseCgroupfs("/")}
	uid := "1234-abcd-5678"
	cases := []struct {
		name              CgroupName
		cgroupfs, systemd string
	}{
		{l.Kubepods(), "/kubepods", "/kubepods.slice"},
		{l.QOS(v1.PodQOSGuaranteed), "/kubepods", "/kubepods.slice"},
		{l.QOS(v1.PodQOSBurstable), "/kubepods/burstable", "/kubepods.slice/kubepods-burstable.slice"},
		{l.QOS(v1.PodQOSBestEffort), "/kubepods/besteffort", "/kubepods.slice/kubepods-besteffort.slice"},
		{l.Pod(v1.PodQOSBurstable, "1234-abcd-5678"), "/kubepods/burstable/pod" + uid,
			"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234_abcd_5678.slice"},
		{l.Pod(v1.PodQOSGuaranteed, "1234-abcd-5678"), "/kubepods/pod" + uid, "/kubepods.slice/kubepods-pod1234_abcd_5678.slice"},
		{Layout{Root: ParseCgroupfs("/vk-cri-a")}.Pod(v1.PodQOSBestEffort, "u"), "/vk-cri-a/kubepods/besteffort/podu",
			"/vk_cri_a.slice/vk_cri_a-kubepods.slice/vk_cri_a-kubepods-besteffort.slice/vk_cri_a-kubepods-besteffort-podu.slice"},
		{CgroupName{}, "/", "/"},
		// The kubelet's ToSystemd doc comment and its TestCgroupNameToSystemd cases.
		{CgroupName{"kubepods", "burstable", "pod1234-abcd-5678-efgh"}, "/kubepods/burstable/pod1234-abcd-5678-efgh",
			"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234_abcd_5678_efgh.slice"},
		{CgroupName{"Burstable", "pod-123"}, "/Burstable/pod-123", "/Burstable.slice/Burstable-pod_123.slice"},
		{CgroupName{"BestEffort", "pod-6c1a4e95-6bb6-11e6-bc26-28d2444e470d"}, "/BestEffort/pod-6c1a4e95-6bb6-11e6-bc26-28d2444e470d",
			"/BestEffort.slice/BestEffort-pod_6c1a4e95_6bb6_11e6_bc26_28d2444e470d.slice"},
	}
	for _, c := range cases {
		if got := c.name.ToCgroupfs(); got != c.cgroupfs {
			t.Errorf("%v cgroupfs = %q, want %q", c.name, got, c.cgroupfs)
		}
		got, err := c.name.ToSystemd()
		if err != nil || got != c.systemd {
			t.Errorf("%v systemd = %q (%v), want %q", c.name, got, err, c.systemd)
		}
		for d, want := range map[Driver]string{DriverCgroupfs: c.cgroupfs, DriverSystemd: c.systemd} {
			if got, err := d.Parent(c.name); err != nil || got != want {
				t.Errorf("%v %s parent = %q (%v), want %q", c.name, d, got, err, want)
			}
		}
	}
	if _, err := Driver("other").Parent(l.Kubepods()); err == nil {
		t.Error("an unknown driver gives a parent")
	}
	for base, want := range map[string]string{"pod1234": "1234", "podu-v": "u-v", "pod": "", "burstable": "", "xpod1": ""} {
		uid, ok := PodUIDOf(base)
		if string(uid) != want || ok != (want != "") {
			t.Errorf("PodUIDOf(%q) = %q %v, want %q", base, uid, ok, want)
		}
	}
}
