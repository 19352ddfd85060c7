package provider

import (
	"context"

	internalapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// podRuntimeService is the part of the container runtime that a pod's worker drives when it
// syncs, executes actions and terminates the pod: reading the pod's state, and the CRI calls
// that start and stop its sandboxes and containers. Images are pulled through the image service
// (image_pulls.go), hooks and probes exec through their own dependencies. Narrow on purpose, so
// that a fake runtime of a few dozen lines drives the worker's tests (fake_runtime_test.go).
type podRuntimeService interface {
	// inspectPod returns the pod's sandboxes and containers as the runtime has them.
	inspectPod(ctx context.Context, uid string) (*podRuntime, error)

	RunPodSandbox(ctx context.Context, config *runtimeapi.PodSandboxConfig, runtimeHandler string) (string, error)
	StopPodSandbox(ctx context.Context, podSandboxID string) error
	RemovePodSandbox(ctx context.Context, podSandboxID string) error
	CreateContainer(ctx context.Context, podSandboxID string, config *runtimeapi.ContainerConfig, sandboxConfig *runtimeapi.PodSandboxConfig) (string, error)
	StartContainer(ctx context.Context, containerID string) error
	StopContainer(ctx context.Context, containerID string, timeout int64) error
	RemoveContainer(ctx context.Context, containerID string) error
}

// criPodRuntime is podRuntimeService on a CRI endpoint: the inspector reads, the runtime
// service acts.
type criPodRuntime struct {
	*inspector
	internalapi.RuntimeService
}

var _ podRuntimeService = criPodRuntime{}
