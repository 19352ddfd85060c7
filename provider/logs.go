package provider

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	"github.com/virtual-kubelet/virtual-kubelet/node/api"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cri-client/pkg/logs"

	"github.com/vk-cri/vk-cri/cri"
)

// streamRequestTimeout bounds the CRI calls that look up what a log, exec, attach or
// port-forward request reads from or connects to (not the stream itself).
const streamRequestTimeout = 30 * time.Second

// ContainerLogs writes a container's log, read from its CRI log file with cri-client's reader,
// to stdout and stderr (either may be nil to leave that stream out). Which instance is read
// comes from the pod's status, as the kubelet decides it; a container with nothing to read is
// an InvalidInput error with the kubelet's message (the API answers 400).
func (p *Provider) ContainerLogs(ctx context.Context, namespace, podName, containerName string, opts *v1.PodLogOptions, stdout, stderr io.Writer) error {
	pod, err := p.GetPod(ctx, namespace, podName)
	if err != nil {
		return err
	}
	statusID, err := logContainerID(pod.Name, &pod.Status, containerName, opts.Previous)
	if err != nil {
		return errdefs.AsInvalidInput(err)
	}
	if stdout != nil {
		// The kubelet writes nothing first, so that the response starts before the reader
		// blocks waiting for the container's output. It does so before it looks the instance
		// up: an instance already removed (a crash loop's older one, named by the status until
		// the next update) is answered 200 with the error text as the body.
		if _, err := stdout.Write(nil); err != nil {
			return err
		}
	}
	id := runtimeContainerID(statusID)
	sctx, cancel := context.WithTimeout(ctx, streamRequestTimeout)
	resp, err := p.rt.Runtime.ContainerStatus(sctx, id, false)
	cancel()
	if err != nil {
		p.podLog(pod).WithError(err).WithField("container", containerName).Debug("log of an instance the runtime does not know")
		return &logLookupError{statusID: statusID}
	}
	return logs.ReadLogs(ctx, resp.GetStatus().GetLogPath(), id, readerOptions(opts, time.Now()), p.rt.Runtime, stdout, stderr)
}

// logLookupError is the kubelet's answer for a log whose instance the runtime cannot find: its
// message names the instance as the status does ("containerd://<id>") and nothing else.
type logLookupError struct {
	statusID string
}

func (e *logLookupError) Error() string {
	return "unable to retrieve container logs for " + e.statusID
}

// readerOptions turns the API's log options into cri-client's reader options. sinceSeconds is
// counted back from now; a later sinceTime wins over it.
func readerOptions(opts *v1.PodLogOptions, now time.Time) *logs.LogOptions {
	lo := &logs.LogOptions{
		TailLines:  opts.TailLines,
		LimitBytes: opts.LimitBytes,
		Follow:     opts.Follow,
		Timestamp:  opts.Timestamps,
	}
	if opts.SinceSeconds != nil {
		lo.Since = now.Add(-time.Duration(*opts.SinceSeconds) * time.Second)
	}
	if opts.SinceTime != nil && opts.SinceTime.After(lo.Since) {
		lo.Since = opts.SinceTime.Time
	}
	return lo
}

// logContainerID picks the container instance whose log a request reads, from the container's
// status, as the status names it ("<runtime>://<id>"): the last terminated instance for
// previous, else the current one, else the last terminated one. Its errors are the kubelet's
// messages.
func logContainerID(podName string, status *v1.PodStatus, containerName string, previous bool) (string, error) {
	cs := findContainerStatus(status, containerName)
	if cs == nil {
		return "", fmt.Errorf("container %q in pod %q is not available", containerName, podName)
	}
	last := cs.LastTerminationState.Terminated
	waiting, running, terminated := cs.State.Waiting, cs.State.Running, cs.State.Terminated
	var id string
	switch {
	case previous:
		if last == nil || last.ContainerID == "" {
			return "", fmt.Errorf("previous terminated container %q in pod %q not found", containerName, podName)
		}
		id = last.ContainerID
	case running != nil:
		id = cs.ContainerID
	case terminated != nil:
		id = terminated.ContainerID
		if id == "" {
			// The next instance did not start: its predecessor still has something to show.
			if last == nil || last.ContainerID == "" {
				return "", fmt.Errorf("container %q in pod %q is terminated", containerName, podName)
			}
			id = last.ContainerID
		}
	case last != nil:
		if last.ContainerID == "" {
			return "", fmt.Errorf("container %q in pod %q is terminated", containerName, podName)
		}
		id = last.ContainerID
	case waiting != nil:
		switch waiting.Reason {
		case cri.ReasonErrImagePull:
			return "", fmt.Errorf("container %q in pod %q is waiting to start: image can't be pulled", containerName, podName)
		case cri.ReasonImagePullBackOff:
			return "", fmt.Errorf("container %q in pod %q is waiting to start: trying and failing to pull image", containerName, podName)
		default:
			return "", fmt.Errorf("container %q in pod %q is waiting to start: %v", containerName, podName, waiting.Reason)
		}
	default:
		return "", fmt.Errorf("container %q in pod %q is waiting to start - no logs yet", containerName, podName)
	}
	return id, nil
}

func findContainerStatus(status *v1.PodStatus, name string) *v1.ContainerStatus {
	for _, list := range [][]v1.ContainerStatus{status.ContainerStatuses, status.InitContainerStatuses, status.EphemeralContainerStatuses} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}

// runtimeContainerID strips the "<runtime>://" prefix of a status's container ID.
func runtimeContainerID(statusID string) string {
	if _, id, ok := strings.Cut(statusID, "://"); ok {
		return id
	}
	return statusID
}

// GetContainerLogs is virtual-kubelet's form of ContainerLogs (its /containerLogs route is
// shadowed by vk-cri's own handler, which serves the kubelet's options and errors).
func (p *Provider) GetContainerLogs(ctx context.Context, namespace, podName, containerName string, opts api.ContainerLogOpts) (io.ReadCloser, error) {
	lo := &v1.PodLogOptions{Follow: opts.Follow, Timestamps: opts.Timestamps, Previous: opts.Previous}
	if opts.Tail > 0 {
		n := int64(opts.Tail)
		lo.TailLines = &n
	}
	if opts.LimitBytes > 0 {
		n := int64(opts.LimitBytes)
		lo.LimitBytes = &n
	}
	if opts.SinceSeconds > 0 {
		n := int64(opts.SinceSeconds)
		lo.SinceSeconds = &n
	}
	if !opts.SinceTime.IsZero() {
		lo.SinceTime = &metav1.Time{Time: opts.SinceTime}
	}
	r, w := io.Pipe()
	go func() {
		w.CloseWithError(p.ContainerLogs(ctx, namespace, podName, containerName, lo, w, w))
	}()
	return r, nil
}
