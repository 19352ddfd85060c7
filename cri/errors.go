package cri

import (
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// IsNotFound reports whether the runtime answered NotFound. containerd 1.6 answers NotFound for
// stop and remove of unknown IDs, which for us means the work is already done.
func IsNotFound(err error) bool {
	return err != nil && status.Code(err) == codes.NotFound
}

// IsUnimplemented reports whether the runtime does not serve the called RPC.
func IsUnimplemented(err error) bool {
	return err != nil && status.Code(err) == codes.Unimplemented
}

// IgnoreNotFound returns nil for a NotFound answer and err otherwise.
func IgnoreNotFound(err error) error {
	if IsNotFound(err) {
		return nil
	}
	return err
}

// Message is the runtime's own message of a failed call, without gRPC's "rpc error: code = ...
// desc = " framing: what the kubelet shows in events and waiting states. An error that carries
// no gRPC status is shown whole.
func Message(err error) string {
	if err == nil {
		return ""
	}
	var se interface{ GRPCStatus() *status.Status }
	if errors.As(err, &se) {
		return se.GRPCStatus().Message()
	}
	return err.Error()
}
