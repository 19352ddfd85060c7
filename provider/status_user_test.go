package provider

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The pod status carries the user of each container's newest instance, as the kubelet's
// convertToAPIContainerStatuses; a container without an instance has none.
func TestGeneratePodStatusContainerUser(t *testing.T) {
	a, b := ctr("a"), ctr("b")
	pod := testPod(withContainers(a, b))
	userOf := func(uid int64) instOpt {
		return func(cs *containerState) {
			cs.User = &runtimeapi.ContainerUser{Linux: &runtimeapi.LinuxContainerUser{Uid: uid, Gid: uid, SupplementalGroups: []int64{uid}}}
		}
	}
	old := exited(a, "c-a-0", "s1", 1, userOf(1000))
	cur := running(a, "c-a-1", "s1", userOf(2000), func(cs *containerState) { cs.RestartCount = 1 })
	got := generatePodStatus(statusIn(pod, rtOf(sbs(sandbox("s1", 0, true)), old, cur)))

	users := map[string]*v1.ContainerUser{}
	for _, cs := range got.ContainerStatuses {
		users[cs.Name] = cs.User
	}
	want := map[string]*v1.ContainerUser{
		"a": {Linux: &v1.LinuxContainerUser{UID: 2000, GID: 2000, SupplementalGroups: []int64{2000}}},
		"b": nil,
	}
	if diff := cmp.Diff(want, users); diff != "" {
		t.Errorf("container status users (-want +got):\n%s", diff)
	}
}
