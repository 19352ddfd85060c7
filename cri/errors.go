package cri

import (
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
