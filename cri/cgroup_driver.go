package cri

import (
	"context"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// runtimeConfigGetter is the part of the CRI runtime service CheckCgroupDriver needs.
type runtimeConfigGetter interface {
	RuntimeConfig(ctx context.Context) (*runtimeapi.RuntimeConfigResponse, error)
}

// CheckCgroupDriver asks the runtime which cgroup driver it runs containers with, as the kubelet
// does at start (getCgroupDriverFromCRI in cmd/kubelet/app/server.go), and refuses what vk-cri
// cannot follow. vk-cri writes cgroupfs parents (/kubepods/burstable/pod<uid>); the kubelet
// switches to the runtime's driver, vk-cri has only cgroupfs, so a runtime on the systemd driver
// would fail every RunPodSandbox with a runc error about the parent's form: better a clear error
// now. A runtime without the RuntimeConfig RPC (containerd 1.6: Unimplemented) or without a Linux
// part is taken to use cgroupfs, as the kubelet then keeps its configured driver.
func CheckCgroupDriver(ctx context.Context, rs runtimeConfigGetter) error {
	resp, err := rs.RuntimeConfig(ctx)
	if status.Code(err) == codes.Unimplemented {
		return nil
	}
	if err != nil {
		return fmt.Errorf("CRI RuntimeConfig (the runtime's cgroup driver): %w", err)
	}
	linux := resp.GetLinux()
	if linux == nil {
		return nil
	}
	switch d := linux.GetCgroupDriver(); d {
	case runtimeapi.CgroupDriver_CGROUPFS:
		return nil
	case runtimeapi.CgroupDriver_SYSTEMD:
		return fmt.Errorf("the CRI runtime uses the systemd cgroup driver; vk-cri supports only cgroupfs: configure the runtime with the cgroupfs driver (containerd: SystemdCgroup = false in its runc options)")
	default:
		return fmt.Errorf("the CRI runtime returned an unknown cgroup driver %d", d)
	}
}
