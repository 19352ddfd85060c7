package cri

import (
	"context"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// runtimeConfigGetter is the part of the CRI runtime service CgroupDriver needs.
type runtimeConfigGetter interface {
	RuntimeConfig(ctx context.Context) (*runtimeapi.RuntimeConfigResponse, error)
}

// The cgroup drivers as the kubelet names them (its --cgroup-driver values).
const (
	CgroupDriverCgroupfs = "cgroupfs"
	CgroupDriverSystemd  = "systemd"
)

// CgroupDriver is the cgroup driver vk-cri must name cgroups for: the one the runtime reports in
// RuntimeConfig, as the kubelet v1.37 takes it (getCgroupDriverFromCRI in
// cmd/kubelet/app/server.go, KEP-4033), or configured (--cgroup-driver) when the runtime lacks
// the RPC (containerd 1.6 answers Unimplemented) or reports no Linux part. fromRuntime tells
// which of the two it is, for the start-up log.
func CgroupDriver(ctx context.Context, rs runtimeConfigGetter, configured string) (driver string, fromRuntime bool, err error) {
	resp, err := rs.RuntimeConfig(ctx)
	if status.Code(err) == codes.Unimplemented {
		return configured, false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("CRI RuntimeConfig (the runtime's cgroup driver): %w", err)
	}
	linux := resp.GetLinux()
	if linux == nil {
		return configured, false, nil
	}
	switch d := linux.GetCgroupDriver(); d {
	case runtimeapi.CgroupDriver_CGROUPFS:
		return CgroupDriverCgroupfs, true, nil
	case runtimeapi.CgroupDriver_SYSTEMD:
		return CgroupDriverSystemd, true, nil
	default:
		return "", false, fmt.Errorf("runtime returned an unknown cgroup driver %d", d)
	}
}
