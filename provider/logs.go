package provider

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	"github.com/virtual-kubelet/virtual-kubelet/node/api"
	"k8s.io/cri-client/pkg/logs"
)

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
	if len(insts) <= idx {
		what := "container"
		if opts.Previous {
			what = "previous terminated container"
		}
		return nil, errdefs.NotFoundf("%s %q in pod %q not found", what, containerName, podName)
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
