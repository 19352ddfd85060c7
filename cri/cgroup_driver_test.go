package cri

import (
	"context"
	"errors"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

type fakeRuntimeConfig struct {
	resp *runtimeapi.RuntimeConfigResponse
	err  error
}

func (f fakeRuntimeConfig) RuntimeConfig(context.Context) (*runtimeapi.RuntimeConfigResponse, error) {
	return f.resp, f.err
}

func driver(d runtimeapi.CgroupDriver) *runtimeapi.RuntimeConfigResponse {
	return &runtimeapi.RuntimeConfigResponse{Linux: &runtimeapi.LinuxRuntimeConfiguration{CgroupDriver: d}}
}

func TestCheckCgroupDriver(t *testing.T) {
	for _, tc := range []struct {
		name    string
		rt      fakeRuntimeConfig
		wantErr string // "" for no error
	}{
		{name: "cgroupfs (containerd 2.x with SystemdCgroup = false)", rt: fakeRuntimeConfig{resp: driver(runtimeapi.CgroupDriver_CGROUPFS)}},
		{name: "no RuntimeConfig RPC (containerd 1.6)", rt: fakeRuntimeConfig{err: status.Error(codes.Unimplemented, "unknown method RuntimeConfig")}},
		{name: "no linux part", rt: fakeRuntimeConfig{resp: &runtimeapi.RuntimeConfigResponse{}}},
		{name: "systemd", rt: fakeRuntimeConfig{resp: driver(runtimeapi.CgroupDriver_SYSTEMD)}, wantErr: "supports only cgroupfs"},
		{name: "unknown driver", rt: fakeRuntimeConfig{resp: driver(runtimeapi.CgroupDriver(7))}, wantErr: "unknown cgroup driver 7"},
		{name: "other error", rt: fakeRuntimeConfig{err: status.Error(codes.Unavailable, "connection refused")}, wantErr: "connection refused"},
		{name: "plain error", rt: fakeRuntimeConfig{err: errors.New("boom")}, wantErr: "RuntimeConfig"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckCgroupDriver(context.Background(), tc.rt)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}
