package cri

import (
	"context"
	"time"

	internalapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// OperationRecorder receives the duration and outcome of each CRI call, named as the kubelet
// names runtime operations (run_podsandbox, create_container, pull_image ...).
type OperationRecorder interface {
	RuntimeOperation(operation string, took time.Duration, err error)
}

// Instrument makes every later call through c's runtime and image services reported to rec.
func (c *Client) Instrument(rec OperationRecorder) {
	c.Runtime = &instrumentedRuntime{RuntimeService: c.Runtime, rec: rec}
	c.Images = &instrumentedImages{ImageManagerService: c.Images, rec: rec}
}

func record(rec OperationRecorder, operation string, start time.Time, err error) {
	rec.RuntimeOperation(operation, time.Since(start), err)
}

func observe[T any](rec OperationRecorder, operation string, call func() (T, error)) (T, error) {
	start := time.Now()
	v, err := call()
	record(rec, operation, start, err)
	return v, err
}

func observeErr(rec OperationRecorder, operation string, call func() error) error {
	start := time.Now()
	err := call()
	record(rec, operation, start, err)
	return err
}

// instrumentedRuntime times the runtime service's calls; calls it does not list (events
// stream, Close) pass through unmeasured, as in the kubelet.
type instrumentedRuntime struct {
	internalapi.RuntimeService
	rec OperationRecorder
}

func (r *instrumentedRuntime) Version(ctx context.Context, v string) (*runtimeapi.VersionResponse, error) {
	return observe(r.rec, "version", func() (*runtimeapi.VersionResponse, error) { return r.RuntimeService.Version(ctx, v) })
}

func (r *instrumentedRuntime) Status(ctx context.Context, verbose bool) (*runtimeapi.StatusResponse, error) {
	return observe(r.rec, "status", func() (*runtimeapi.StatusResponse, error) { return r.RuntimeService.Status(ctx, verbose) })
}

func (r *instrumentedRuntime) RunPodSandbox(ctx context.Context, cfg *runtimeapi.PodSandboxConfig, handler string) (string, error) {
	return observe(r.rec, "run_podsandbox", func() (string, error) { return r.RuntimeService.RunPodSandbox(ctx, cfg, handler) })
}

func (r *instrumentedRuntime) StopPodSandbox(ctx context.Context, id string) error {
	return observeErr(r.rec, "stop_podsandbox", func() error { return r.RuntimeService.StopPodSandbox(ctx, id) })
}

func (r *instrumentedRuntime) RemovePodSandbox(ctx context.Context, id string) error {
	return observeErr(r.rec, "remove_podsandbox", func() error { return r.RuntimeService.RemovePodSandbox(ctx, id) })
}

func (r *instrumentedRuntime) PodSandboxStatus(ctx context.Context, id string, verbose bool) (*runtimeapi.PodSandboxStatusResponse, error) {
	return observe(r.rec, "podsandbox_status", func() (*runtimeapi.PodSandboxStatusResponse, error) {
		return r.RuntimeService.PodSandboxStatus(ctx, id, verbose)
	})
}

func (r *instrumentedRuntime) ListPodSandbox(ctx context.Context, f *runtimeapi.PodSandboxFilter) ([]*runtimeapi.PodSandbox, error) {
	return observe(r.rec, "list_podsandbox", func() ([]*runtimeapi.PodSandbox, error) { return r.RuntimeService.ListPodSandbox(ctx, f) })
}

func (r *instrumentedRuntime) CreateContainer(ctx context.Context, sandboxID string, cfg *runtimeapi.ContainerConfig, sbCfg *runtimeapi.PodSandboxConfig) (string, error) {
	return observe(r.rec, "create_container", func() (string, error) {
		return r.RuntimeService.CreateContainer(ctx, sandboxID, cfg, sbCfg)
	})
}

func (r *instrumentedRuntime) StartContainer(ctx context.Context, id string) error {
	return observeErr(r.rec, "start_container", func() error { return r.RuntimeService.StartContainer(ctx, id) })
}

func (r *instrumentedRuntime) StopContainer(ctx context.Context, id string, timeout int64) error {
	return observeErr(r.rec, "stop_container", func() error { return r.RuntimeService.StopContainer(ctx, id, timeout) })
}

func (r *instrumentedRuntime) RemoveContainer(ctx context.Context, id string) error {
	return observeErr(r.rec, "remove_container", func() error { return r.RuntimeService.RemoveContainer(ctx, id) })
}

func (r *instrumentedRuntime) ListContainers(ctx context.Context, f *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error) {
	return observe(r.rec, "list_containers", func() ([]*runtimeapi.Container, error) { return r.RuntimeService.ListContainers(ctx, f) })
}

func (r *instrumentedRuntime) ContainerStatus(ctx context.Context, id string, verbose bool) (*runtimeapi.ContainerStatusResponse, error) {
	return observe(r.rec, "container_status", func() (*runtimeapi.ContainerStatusResponse, error) {
		return r.RuntimeService.ContainerStatus(ctx, id, verbose)
	})
}

func (r *instrumentedRuntime) UpdateContainerResources(ctx context.Context, id string, res *runtimeapi.ContainerResources) error {
	return observeErr(r.rec, "update_container", func() error { return r.RuntimeService.UpdateContainerResources(ctx, id, res) })
}

func (r *instrumentedRuntime) ReopenContainerLog(ctx context.Context, id string) error {
	return observeErr(r.rec, "reopen_container_log", func() error { return r.RuntimeService.ReopenContainerLog(ctx, id) })
}

func (r *instrumentedRuntime) ExecSync(ctx context.Context, id string, cmd []string, timeout time.Duration) ([]byte, []byte, error) {
	start := time.Now()
	stdout, stderr, err := r.RuntimeService.ExecSync(ctx, id, cmd, timeout)
	record(r.rec, "exec_sync", start, err)
	return stdout, stderr, err
}

func (r *instrumentedRuntime) Exec(ctx context.Context, req *runtimeapi.ExecRequest) (*runtimeapi.ExecResponse, error) {
	return observe(r.rec, "exec", func() (*runtimeapi.ExecResponse, error) { return r.RuntimeService.Exec(ctx, req) })
}

func (r *instrumentedRuntime) Attach(ctx context.Context, req *runtimeapi.AttachRequest) (*runtimeapi.AttachResponse, error) {
	return observe(r.rec, "attach", func() (*runtimeapi.AttachResponse, error) { return r.RuntimeService.Attach(ctx, req) })
}

func (r *instrumentedRuntime) PortForward(ctx context.Context, req *runtimeapi.PortForwardRequest) (*runtimeapi.PortForwardResponse, error) {
	return observe(r.rec, "port_forward", func() (*runtimeapi.PortForwardResponse, error) { return r.RuntimeService.PortForward(ctx, req) })
}

func (r *instrumentedRuntime) ContainerStats(ctx context.Context, id string) (*runtimeapi.ContainerStats, error) {
	return observe(r.rec, "container_stats", func() (*runtimeapi.ContainerStats, error) { return r.RuntimeService.ContainerStats(ctx, id) })
}

func (r *instrumentedRuntime) ListContainerStats(ctx context.Context, f *runtimeapi.ContainerStatsFilter) ([]*runtimeapi.ContainerStats, error) {
	return observe(r.rec, "list_container_stats", func() ([]*runtimeapi.ContainerStats, error) {
		return r.RuntimeService.ListContainerStats(ctx, f)
	})
}

func (r *instrumentedRuntime) PodSandboxStats(ctx context.Context, id string) (*runtimeapi.PodSandboxStats, error) {
	return observe(r.rec, "podsandbox_stats", func() (*runtimeapi.PodSandboxStats, error) { return r.RuntimeService.PodSandboxStats(ctx, id) })
}

func (r *instrumentedRuntime) ListPodSandboxStats(ctx context.Context, f *runtimeapi.PodSandboxStatsFilter) ([]*runtimeapi.PodSandboxStats, error) {
	return observe(r.rec, "list_podsandbox_stats", func() ([]*runtimeapi.PodSandboxStats, error) {
		return r.RuntimeService.ListPodSandboxStats(ctx, f)
	})
}

// instrumentedImages times the image service's calls.
type instrumentedImages struct {
	internalapi.ImageManagerService
	rec OperationRecorder
}

func (i *instrumentedImages) ListImages(ctx context.Context, f *runtimeapi.ImageFilter) ([]*runtimeapi.Image, error) {
	return observe(i.rec, "list_images", func() ([]*runtimeapi.Image, error) { return i.ImageManagerService.ListImages(ctx, f) })
}

func (i *instrumentedImages) ImageStatus(ctx context.Context, img *runtimeapi.ImageSpec, verbose bool) (*runtimeapi.ImageStatusResponse, error) {
	return observe(i.rec, "image_status", func() (*runtimeapi.ImageStatusResponse, error) {
		return i.ImageManagerService.ImageStatus(ctx, img, verbose)
	})
}

func (i *instrumentedImages) PullImage(ctx context.Context, img *runtimeapi.ImageSpec, auth *runtimeapi.AuthConfig, sbCfg *runtimeapi.PodSandboxConfig) (string, error) {
	return observe(i.rec, "pull_image", func() (string, error) { return i.ImageManagerService.PullImage(ctx, img, auth, sbCfg) })
}

func (i *instrumentedImages) RemoveImage(ctx context.Context, img *runtimeapi.ImageSpec) error {
	return observeErr(i.rec, "remove_image", func() error { return i.ImageManagerService.RemoveImage(ctx, img) })
}

func (i *instrumentedImages) ImageFsInfo(ctx context.Context) (*runtimeapi.ImageFsInfoResponse, error) {
	return observe(i.rec, "image_fs_info", func() (*runtimeapi.ImageFsInfoResponse, error) { return i.ImageManagerService.ImageFsInfo(ctx) })
}
