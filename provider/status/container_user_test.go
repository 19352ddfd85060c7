package status

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
			if diff := cmp.Diff(tc.want, ContainerUser(tc.in)); diff != "" {
				t.Errorf("ContainerUser (-want +got):\n%s", diff)
			}
		})
	}
}
