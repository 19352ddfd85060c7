package cm

import (
	"path"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// The slice basenames of the kubelet's TestCgroupNameToSystemdBasename
// (pkg/kubelet/cm/cgroup_manager_linux_test.go).
func TestSystemdBasenames(t *testing.T) {
	for _, c := range []struct {
		name CgroupName
		want string
	}{
		{CgroupName{}, "/"},
		{CgroupName{"system"}, "system.slice"},
		{CgroupName{"system", "Burstable"}, "system-Burstable.slice"},
		{CgroupName{"Burstable", "pod-123"}, "Burstable-pod_123.slice"},
		{CgroupName{"test", "a", "b"}, "test-a-b.slice"},
		{CgroupName{"test", "a", "b", "Burstable"}, "test-a-b-Burstable.slice"},
		{CgroupName{"Burstable"}, "Burstable.slice"},
		{CgroupName{"BestEffort", "pod-6c1a4e95-6bb6-11e6-bc26-28d2444e470d"}, "BestEffort-pod_6c1a4e95_6bb6_11e6_bc26_28d2444e470d.slice"},
	} {
		got, err := c.name.ToSystemd()
		if err != nil || path.Base(got) != c.want {
			t.Errorf("%v: basename %q (%v), want %q", c.name, path.Base(got), err, c.want)
		}
	}
}

// The unit and parent slice the systemd manager is given, as the kubelet's libctCgroupConfig
// splits the expanded name: the parent's basename, or "-.slice" for the root's children.
func TestSystemdUnit(t *testing.T) {
	l := Layout{Root: CgroupName{}}
	for _, c := range []struct {
		name         CgroupName
		parent, unit string
	}{
		{l.Kubepods(), "-.slice", "kubepods.slice"},
		{l.QOS(v1.PodQOSBurstable), "kubepods.slice", "kubepods-burstable.slice"},
		{l.QOS(v1.PodQOSBestEffort), "kubepods.slice", "kubepods-besteffort.slice"},
		{l.Pod(v1.PodQOSBurstable, "6c1a4e95-6bb6-11e6"), "kubepods-burstable.slice", "kubepods-burstable-pod6c1a4e95_6bb6_11e6.slice"},
		{l.Pod(v1.PodQOSGuaranteed, "6c1a4e95-6bb6-11e6"), "kubepods.slice", "kubepods-pod6c1a4e95_6bb6_11e6.slice"},
		{Layout{Root: ParseCgroupfs("/vk-cri-a")}.Kubepods(), "vk_cri_a.slice", "vk_cri_a-kubepods.slice"},
	} {
		parent, unit, err := systemdUnit(c.name)
		if err != nil || parent != c.parent || unit != c.unit {
			t.Errorf("%v: unit %q in %q (%v), want %q in %q", c.name, unit, parent, err, c.unit, c.parent)
		}
	}
	if _, _, err := systemdUnit(CgroupName{}); err == nil {
		t.Error("the root cgroup got a unit")
	}
}

// A child slice's directory gives back its last component as the kubelet's
// ParseSystemdToCgroupName does ("/test.slice" is [test]; '_' unescapes to '-'), so that the
// orphan sweep finds pod<uid> under either driver; scopes and other files are no children.
func TestLastSystemdComponent(t *testing.T) {
	for dir, want := range map[string]string{
		"test.slice": "test",
		"kubepods-burstable-pod6c1a4e95_6bb6_11e6.slice": "pod6c1a4e95-6bb6-11e6",
		"kubepods-besteffort.slice":                      "besteffort",
		"cri-containerd-0123abcd.scope":                  "",
		".slice":                                         "",
	} {
		got, ok := lastSystemdComponent(dir)
		if got != want || ok != (want != "") {
			t.Errorf("lastSystemdComponent(%q) = %q %v, want %q", dir, got, ok, want)
		}
	}
	if uid, ok := PodUIDOf("pod6c1a4e95-6bb6-11e6"); !ok || uid != "6c1a4e95-6bb6-11e6" {
		t.Errorf("the unescaped component gives uid %q %v", uid, ok)
	}
}
