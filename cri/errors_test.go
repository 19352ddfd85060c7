package cri

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestErrorClassification(t *testing.T) {
	notFound := status.Error(codes.NotFound, "container \"abc\" not found")
	unimpl := status.Error(codes.Unimplemented, "unknown method")
	cases := []struct {
		name              string
		err               error
		wantNotFound      bool
		wantUnimplemented bool
	}{
		{"nil", nil, false, false},
		{"grpc NotFound", notFound, true, false},
		{"wrapped NotFound", fmt.Errorf("stop container: %w", notFound), true, false},
		{"doubly wrapped NotFound", fmt.Errorf("sync: %w", fmt.Errorf("stop container: %w", notFound)), true, false},
		{"NotFound joined with another error", errors.Join(errors.New("first"), notFound), true, false},
		{"NotFound formatted with %v (not wrapped)", fmt.Errorf("stop container: %v", notFound), false, false},
		{"grpc Unimplemented", unimpl, false, true},
		{"wrapped Unimplemented", fmt.Errorf("ListMetricDescriptors: %w", unimpl), false, true},
		{"other grpc code", status.Error(codes.Unavailable, "connection refused"), false, false},
		{"grpc OK status error", status.Error(codes.OK, ""), false, false},
		{"plain error mentioning not found", errors.New("not found"), false, false},
		{"context deadline", context.DeadlineExceeded, false, false},
	}
	for _, tc := range cases {
		if got := IsNotFound(tc.err); got != tc.wantNotFound {
			t.Errorf("%s: IsNotFound = %v, want %v", tc.name, got, tc.wantNotFound)
		}
		if got := IsUnimplemented(tc.err); got != tc.wantUnimplemented {
			t.Errorf("%s: IsUnimplemented = %v, want %v", tc.name, got, tc.wantUnimplemented)
		}
	}
}

func TestIgnoreNotFound(t *testing.T) {
	notFound := status.Error(codes.NotFound, "gone")
	if err := IgnoreNotFound(notFound); err != nil {
		t.Errorf("IgnoreNotFound(NotFound) = %v", err)
	}
	if err := IgnoreNotFound(fmt.Errorf("remove: %w", notFound)); err != nil {
		t.Errorf("IgnoreNotFound(wrapped NotFound) = %v", err)
	}
	if err := IgnoreNotFound(nil); err != nil {
		t.Errorf("IgnoreNotFound(nil) = %v", err)
	}
	other := status.Error(codes.Internal, "boom")
	if err := IgnoreNotFound(other); err != other {
		t.Errorf("IgnoreNotFound(Internal) = %v, want the same error back", err)
	}
	plain := errors.New("plain")
	if err := IgnoreNotFound(plain); err != plain {
		t.Errorf("IgnoreNotFound(plain) = %v, want the same error back", err)
	}
}

func TestMessage(t *testing.T) {
	runc := `failed to create containerd task: failed to create shim task: OCI runtime create failed: exec: "nope": executable file not found in $PATH: unknown`
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"grpc status: its description only", status.Error(codes.Unknown, runc), runc},
		{"wrapped grpc status: the runtime's description", fmt.Errorf("StartContainer: %w", status.Error(codes.Unknown, runc)), runc},
		{"no grpc status: the whole text", errors.New("creating log dir: permission denied"), "creating log dir: permission denied"},
	}
	for _, tc := range cases {
		if got := Message(tc.err); got != tc.want {
			t.Errorf("%s: Message = %q, want %q", tc.name, got, tc.want)
		}
	}
}
