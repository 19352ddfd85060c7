package provider

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	"github.com/virtual-kubelet/virtual-kubelet/node/api"
	v1 "k8s.io/api/core/v1"
	"k8s.io/cri-client/pkg/logs"
)

func waitingReasonOf(pod *v1.Pod, name string) string {
	for _, list := range [][]v1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for _, s := range list {
			if s.Name == name && s.State.Waiting != nil {
				return s.State.Waiting.Reason
			}
		}
	}
	return reasonContainerCreating
}

// GetContainerLogs streams a container's log file, read with cri-client's CRI log reader.
func (p *Provider) GetContainerLogs(ctx context.Context, namespace, podName, containerName string, opts api.ContainerLogOpts) (io.ReadCloser, error) {
	pod, err := p.GetPod(ctx, namespace, podName)
	if err != nil {
		return nil, err
	}
	rt, err := p.inspector.inspectPod(ctx, string(pod.UID))
	if err != nil {
		return nil, fmt.Errorf("reading pod state: %w", err)
	}
	insts := rt.instances(containerName)
	idx := 0
	if opts.Previous {
		idx = 1
	}
	// Like the kubelet, a container with nothing to show is a bad request (400), not a 404.
	if len(insts) <= idx {
		if opts.Previous {
			return nil, errdefs.InvalidInputf("no previous terminated instance of container %q in pod %q", containerName, podName)
		}
		return nil, errdefs.InvalidInputf("container %q in pod %q has not started yet: %s", containerName, podName, waitingReasonOf(pod, containerName))
	}
	id := insts[idx].ID
	resp, err := p.rt.Runtime.ContainerStatus(ctx, id, false)
	if err != nil {
		return nil, fmt.Errorf("container status %s: %w", id, err)
	}
	path := resp.GetStatus().GetLogPath()

	lo := &logs.LogOptions{Follow: opts.Follow, Timestamp: opts.Timestamps}
	if opts.Tail > 0 {
		n := int64(opts.Tail)
		lo.TailLines = &n
	}
	if opts.LimitBytes > 0 {
		n := int64(opts.LimitBytes)
		lo.LimitBytes = &n
	}
	switch {
	case !opts.SinceTime.IsZero():
		lo.Since = opts.SinceTime
	case opts.SinceSeconds > 0:
		lo.Since = time.Now().Add(-time.Duration(opts.SinceSeconds) * time.Second)
	}

	r, w := io.Pipe()
	go func() {
		err := logs.ReadLogs(ctx, path, id, lo, p.rt.Runtime, w, w)
		w.CloseWithError(err)
	}()
	return r, nil
}
