// Package cri talks to a CRI v1 runtime (containerd, CRI-O) through k8s.io/cri-client.
package cri

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	utilversion "k8s.io/apimachinery/pkg/util/version"
	internalapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	remote "k8s.io/cri-client/pkg"
)

// Client holds the runtime and image services of one CRI endpoint and what the runtime said of itself.
type Client struct {
	Runtime  internalapi.RuntimeService
	Images   internalapi.ImageManagerService
	Endpoint string
	// Version is the runtime's answer to the Version call made when connecting.
	Version *runtimeapi.VersionResponse
}

// Connect dials endpoint, checks that it speaks CRI v1 and returns a client whose every call
// is bounded by requestTimeout (cri-client applies it per call).
func Connect(ctx context.Context, endpoint string, requestTimeout time.Duration) (*Client, error) {
	if err := checkSocket(endpoint); err != nil {
		return nil, err
	}
	// A runtime that accepts the connection but never answers must not hang start-up.
	dialCtx, cancel := context.WithTimeout(ctx, min(requestTimeout, 30*time.Second))
	defer cancel()
	rs, err := remote.NewRemoteRuntimeServiceBuilder().
		WithEndpoint(endpoint).
		WithConnectionTimeout(requestTimeout).
		WithTracerProvider(nil).
		Build(dialCtx)
	if err != nil {
		return nil, fmt.Errorf("CRI endpoint %s does not answer as a CRI v1 runtime service: %w", endpoint, err)
	}
	is, err := remote.NewRemoteImageServiceBuilder().
		WithEndpoint(endpoint).
		WithConnectionTimeout(requestTimeout).
		WithTracerProvider(nil).
		Build(dialCtx)
	if err != nil {
		return nil, fmt.Errorf("CRI endpoint %s does not answer as a CRI v1 image service: %w", endpoint, err)
	}
	v, err := rs.Version(dialCtx, "v1")
	if err != nil {
		return nil, fmt.Errorf("CRI endpoint %s: version: %w", endpoint, err)
	}
	return &Client{Runtime: rs, Images: is, Endpoint: endpoint, Version: v}, nil
}

// RuntimeVersionString is the node's containerRuntimeVersion, e.g. "containerd://1.6.20".
func (c *Client) RuntimeVersionString() string {
	return RuntimeVersionString(c.Version)
}

// RuntimeVersionString formats a Version answer the way the kubelet reports it in nodeInfo.
func RuntimeVersionString(v *runtimeapi.VersionResponse) string {
	if v == nil {
		return ""
	}
	ver := v.RuntimeVersion
	// The kubelet parses the version, so Debian's "1.6.20~ds1" is reported as "1.6.20".
	if parsed, err := utilversion.ParseGeneric(ver); err == nil {
		ver = parsed.String()
	}
	return v.RuntimeName + "://" + ver
}

// checkSocket gives a clear error for the common mistake of a missing unix socket, which gRPC
// would otherwise only report as a connection time-out.
func checkSocket(endpoint string) error {
	path, ok := strings.CutPrefix(endpoint, "unix://")
	if !ok {
		if strings.Contains(endpoint, "://") {
			return nil
		}
		path = endpoint
	}
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("CRI endpoint %s: socket %s is not there (is the runtime running?): %w", endpoint, path, err)
	}
	if fi.Mode()&os.ModeSocket == 0 {
		return fmt.Errorf("CRI endpoint %s: %s is not a unix socket", endpoint, path)
	}
	return nil
}
