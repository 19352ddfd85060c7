package stats

import (
	"reflect"
	"testing"

	"github.com/vk-cri/vk-cri/cm"
)

// The stats read the cgroups where vk-cri made them: cgroupfs paths, or with the systemd
// driver the kubelet's slices and the runtime's container scopes.
func TestCgroupPathsByDriver(t *testing.T) {
	if got := podsCgroupPath("/vk-cri", cm.DriverCgroupfs); got != "/vk-cri/kubepods" {
		t.Errorf("cgroupfs kubepods = %q", got)
	}
	if got := podsCgroupPath("/", cm.DriverSystemd); got != "/kubepods.slice" {
		t.Errorf("systemd kubepods = %q", got)
	}
	if got, want := podCgroupCandidates("/vk-cri", "", "u-1"), []string{
		"/vk-cri/kubepods/besteffort/podu-1", "/vk-cri/kubepods/burstable/podu-1", "/vk-cri/kubepods/podu-1",
	}; !reflect.DeepEqual(got, want) {
		t.Errorf("cgroupfs pod candidates = %q, want %q", got, want)
	}
	if got, want := podCgroupCandidates("/", cm.DriverSystemd, "u-1"), []string{
		"/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podu_1.slice",
		"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podu_1.slice",
		"/kubepods.slice/kubepods-podu_1.slice",
	}; !reflect.DeepEqual(got, want) {
		t.Errorf("systemd pod candidates = %q, want %q", got, want)
	}
	if got := containerCgroupCandidates("/p", cm.DriverCgroupfs, "abc"); !reflect.DeepEqual(got, []string{"/p/abc"}) {
		t.Errorf("cgroupfs container = %q", got)
	}
	if got := containerCgroupCandidates("/p.slice", cm.DriverSystemd, "abc"); got[0] != "/p.slice/cri-containerd-abc.scope" {
		t.Errorf("systemd container = %q", got)
	}
}
