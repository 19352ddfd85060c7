package provider

import (
	"context"
	"fmt"
	"io"
	"net/url"

	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	"github.com/virtual-kubelet/virtual-kubelet/node/api"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-cri/vk-cri/streaming"
)

// ExecURL asks the runtime where it serves an exec of cmd in the running container: vk-cri
// proxies the client's upgraded connection to that URL, as the kubelet does. A container that
// does not run is an error with the kubelet's message.
func (p *Provider) ExecURL(ctx context.Context, pod *v1.Pod, podUID types.UID, containerName string, cmd []string, s streaming.Streams) (*url.URL, error) {
	id, err := p.runningContainerID(ctx, pod, podUID, containerName)
	if err != nil {
		return nil, err
	}
	if id == "" {
		return nil, fmt.Errorf("container not found (%q)", containerName)
	}
	ctx, cancel := context.WithTimeout(ctx, streamRequestTimeout)
	defer cancel()
	resp, err := p.rt.Runtime.Exec(ctx, &runtimeapi.ExecRequest{
		ContainerId: id, Cmd: cmd, Tty: s.TTY, Stdin: s.Stdin, Stdout: s.Stdout, Stderr: s.Stderr,
	})
	if err != nil {
		return nil, err
	}
	return url.Parse(resp.Url)
}

// AttachURL asks the runtime where it serves an attach to the running container. Whether a
// terminal is used is the container's own setting, which cannot change once it runs.
func (p *Provider) AttachURL(ctx context.Context, pod *v1.Pod, podUID types.UID, containerName string, s streaming.Streams) (*url.URL, error) {
	fullName := pod.Name + "_" + pod.Namespace
	id, err := p.runningContainerID(ctx, pod, podUID, containerName)
	if err != nil {
		return nil, err
	}
	spec := containerSpec(pod, containerName)
	if id == "" || spec == nil {
		return nil, fmt.Errorf("container %s not found in pod %s", containerName, fullName)
	}
	ctx, cancel := context.WithTimeout(ctx, streamRequestTimeout)
	defer cancel()
	resp, err := p.rt.Runtime.Attach(ctx, &runtimeapi.AttachRequest{
		ContainerId: id, Stdin: s.Stdin, Stdout: s.Stdout, Stderr: s.Stderr, Tty: spec.TTY,
	})
	if err != nil {
		return nil, err
	}
	return url.Parse(resp.Url)
}

// PortForwardURL asks the runtime where it serves port forwarding into the pod's sandbox.
func (p *Provider) PortForwardURL(ctx context.Context, pod *v1.Pod, podUID types.UID, ports []int32) (*url.URL, error) {
	uid, err := streamPodUID(pod, podUID)
	if err != nil {
		return nil, err
	}
	rt, err := p.inspector.inspectPod(ctx, string(uid))
	if err != nil {
		return nil, err
	}
	sb := rt.newestSandbox()
	if sb == nil || !sb.Ready {
		return nil, fmt.Errorf("pod not found (%q)", pod.Name+"_"+pod.Namespace)
	}
	ctx, cancel := context.WithTimeout(ctx, streamRequestTimeout)
	defer cancel()
	resp, err := p.rt.Runtime.PortForward(ctx, &runtimeapi.PortForwardRequest{PodSandboxId: sb.ID, Port: ports})
	if err != nil {
		return nil, err
	}
	return url.Parse(resp.Url)
}

// runningContainerID is the runtime ID of the running instance of the named container of pod,
// or "" when none runs. A UID from the request's path must be the pod's own (streamPodUID).
func (p *Provider) runningContainerID(ctx context.Context, pod *v1.Pod, podUID types.UID, name string) (string, error) {
	uid, err := streamPodUID(pod, podUID)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, streamRequestTimeout)
	defer cancel()
	rt, err := p.inspector.inspectPod(ctx, string(uid))
	if err != nil {
		return "", err
	}
	for _, c := range rt.instances(name) {
		if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			return c.ID, nil
		}
	}
	return "", nil
}

// streamPodUID is the UID whose containers a stream of pod may reach: the pod's own. A UID in the
// request path (/exec/{namespace}/{pod}/{uid}/{container}) that is not the named pod's is
// refused: the runtime's containers are found by UID, so taking it as given would let a caller
// allowed on one pod reach the containers of any other pod of the node. (The kubelet looks the
// container up by the pod's full name and so never reaches another pod either.)
func streamPodUID(pod *v1.Pod, requested types.UID) (types.UID, error) {
	if requested != "" && requested != pod.UID {
		// The streaming handlers answer 404 before they get here; this keeps the host's own
		// contract whoever calls it.
		return "", fmt.Errorf("pod not found: UID %q is not the UID of pod %s/%s", requested, pod.Namespace, pod.Name)
	}
	return pod.UID, nil
}

func containerSpec(pod *v1.Pod, name string) *v1.Container {
	for _, list := range [][]v1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	for i := range pod.Spec.EphemeralContainers {
		if pod.Spec.EphemeralContainers[i].Name == name {
			return (*v1.Container)(&pod.Spec.EphemeralContainers[i].EphemeralContainerCommon)
		}
	}
	return nil
}

// virtual-kubelet's node/api forms of exec, attach and port-forward. Its routes for them are
// shadowed by vk-cri's streaming proxy (package streaming), which hands the client's connection
// to the runtime instead of copying streams through these callbacks.

// RunInContainer is never reached: /exec is served by vk-cri's streaming proxy.
func (p *Provider) RunInContainer(context.Context, string, string, string, []string, api.AttachIO) error {
	return errdefs.InvalidInput("exec is served by vk-cri's streaming proxy, not virtual-kubelet's handler")
}

// AttachToContainer is never reached: /attach is served by vk-cri's streaming proxy.
func (p *Provider) AttachToContainer(context.Context, string, string, string, api.AttachIO) error {
	return errdefs.InvalidInput("attach is served by vk-cri's streaming proxy, not virtual-kubelet's handler")
}

// PortForward is never reached: /portForward is served by vk-cri's streaming proxy.
func (p *Provider) PortForward(context.Context, string, string, int32, io.ReadWriteCloser) error {
	return errdefs.InvalidInput("port-forward is served by vk-cri's streaming proxy, not virtual-kubelet's handler")
}

var _ streaming.Host = (*Provider)(nil)
