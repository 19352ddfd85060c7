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

func TestCgroupDriver(t *testing.T) {
	for _, tc := range []struct {
		name       string
		rt         fakeRuntimeConfig
		configured string
		want       string
		fromRT     bool
		wantErr    string // "" for no error
	}{
		{name: "cgroupfs (containerd 2.x with SystemdCgroup = false) over a configured systemd", rt: fakeRuntimeConfig{resp: driver(runtimeapi.CgroupDriver_CGROUPFS)}, configured: "systemd", want: "cgroupfs", fromRT: true},
		{name: "no RuntimeConfig RPC (containerd 1.6): the configured driver", rt: fakeRuntimeConfig{err: status.Error(codes.Unimplemented, "unknown method RuntimeConfig")}, configured: "systemd", want: "systemd"},
		{name: "no linux part: the configured driver", rt: fakeRuntimeConfig{resp: &runtimeapi.RuntimeConfigResponse{}}, configured: "cgroupfs", want: "cgroupfs"},
		{name: "systemd (SystemdCgroup = true) over a configured cgroupfs", rt: fakeRuntimeConfig{resp: driver(runtimeapi.CgroupDriver_SYSTEMD)}, configured: "cgroupfs", want: "systemd", fromRT: true},
		{name: "unknown driver", rt: fakeRuntimeConfig{resp: driver(runtimeapi.CgroupDriver(7))}, wantErr: "unknown cgroup driver 7"},
		{name: "other error", rt: fakeRuntimeConfig{err: status.Error(codes.Unavailable, "connection refused")}, wantErr: "connection refused"},
		{name: "plain error", rt: fakeRuntimeConfig{err: errors.New("boom")}, wantErr: "RuntimeConfig"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, fromRT, err := CgroupDriver(context.Background(), tc.rt, tc.configured)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			case err == nil && (got != tc.want || fromRT != tc.fromRT):
				t.Fatalf("driver %q (from the runtime: %v), want %q (%v)", got, fromRT, tc.want, tc.fromRT)
			}
		})
	}
}
