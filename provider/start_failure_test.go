package provider

import (
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The kubelet's Failed event for a container that could not be started reads "Error: " and the
// runtime's message; its waiting state carries the same message.
func TestRuntimeCallFailure(t *testing.T) {
	runc := `failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: "/does-not-exist": stat /does-not-exist: no such file or directory: unknown`
	cases := []struct {
		name      string
		reason    string
		err       error
		wantEvent string
	}{
		{"start refused by the runtime", reasonRunContainer, status.Error(codes.Unknown, runc), "Error: " + runc},
		{"start error wrapped on its way", reasonRunContainer, fmt.Errorf("sync: %w", status.Error(codes.Unknown, runc)), "Error: " + runc},
		{"create refused", reasonCreateContainer, status.Error(codes.Unknown, "failed to reserve container name"), "Error: failed to reserve container name"},
		{"no gRPC status", reasonRunContainer, fmt.Errorf("deadline"), "Error: deadline"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			why := runtimeCallFailure(tc.reason, tc.err)
			if why.Reason != tc.reason {
				t.Errorf("reason %q, want %q", why.Reason, tc.reason)
			}
			if got := failedEventMessage(why); got != tc.wantEvent {
				t.Errorf("event message %q, want %q", got, tc.wantEvent)
			}
			if "Error: "+why.Message != tc.wantEvent {
				t.Errorf("waiting message %q, want the event's", why.Message)
			}
		})
	}
}
