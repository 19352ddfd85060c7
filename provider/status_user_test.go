package provider

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestContainerStatusUser(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   *runtimeapi.ContainerUser
		want *v1.ContainerUser
	}{
		{name: "runtime reports no user (containerd 1.6)", in: nil, want: nil},
		{name: "user without linux part", in: &runtimeapi.ContainerUser{}, want: &v1.ContainerUser{}},
		{
			name: "linux user with supplementary groups",
			in:   &runtimeapi.ContainerUser{Linux: &runtimeapi.LinuxContainerUser{Uid: 1000, Gid: 3000, SupplementalGroups: []int64{3000, 4000, 50000}}},
			want: &v1.ContainerUser{Linux: &v1.LinuxContainerUser{UID: 1000, GID: 3000, SupplementalGroups: []int64{3000, 4000, 50000}}},
		},
		{
			name: "root",
			in:   &runtimeapi.ContainerUser{Linux: &runtimeapi.LinuxContainerUser{Uid: 0, Gid: 0, SupplementalGroups: []int64{0, 10}}},
			want: &v1.ContainerUser{Linux: &v1.LinuxContainerUser{UID: 0, GID: 0, SupplementalGroups: []int64{0, 10}}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, containerStatusUser(tc.in)); diff != "" {
				t.Errorf("containerStatusUser (-want +got):\n%s", diff)
			}
		})
	}
}

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
