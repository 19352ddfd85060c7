package status

import (
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// ContainerUser is a container status's user: the uid, gid and supplementary groups the
// runtime says the container's process runs with, as the kubelet v1.37 reports them
// (SupplementalGroupsPolicy is GA: toKubeContainerUser in
// pkg/kubelet/kuberuntime/kuberuntime_container_linux.go and convertContainerStatusUser in
// pkg/kubelet/kubelet_pods.go). A runtime that reports no user (containerd 1.6) gives none.
func ContainerUser(u *runtimeapi.ContainerUser) *v1.ContainerUser {
	if u == nil {
		return nil
	}
	out := &v1.ContainerUser{}
	if l := u.GetLinux(); l != nil {
		out.Linux = &v1.LinuxContainerUser{
			UID:                l.GetUid(),
			GID:                l.GetGid(),
			SupplementalGroups: l.GetSupplementalGroups(),
		}
	}
	return out
}
