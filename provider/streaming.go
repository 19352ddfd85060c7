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
// does not run is an error with the kubelet's message. A UID in the request's path is not
// looked at: the kubelet finds the container by the pod's full name, which wins over the UID
// (kubelet_pods.go findContainer, container/runtime.go Pods.FindPod), so an exec always lands
// in the pod the path names.
func (p *Provider) ExecURL(ctx context.Context, pod *v1.Pod, _ types.UID, containerName string, cmd []string, s streaming.Streams) (*url.URL, error) {
	id, err := p.runningContainerID(ctx, pod, containerName)
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

// RunCommand runs cmd to its end in the pod's running container, as the kubelet's /run does
// (kuberuntime RunInContainer): stdout then stderr, and the runtime's error for a non-zero exit.
// Like exec it is the named pod's container whatever UID the path holds.
func (p *Provider) RunCommand(ctx context.Context, pod *v1.Pod, containerName string, cmd []string) ([]byte, error) {
	id, err := p.runningContainerID(ctx, pod, containerName)
	if err != nil {
		return nil, err
	}
	if id == "" {
		return nil, fmt.Errorf("container not found (%q)", containerName)
	}
	// The kubelet passes no timeout either; the request's context bounds it.
	stdout, stderr, err := p.rt.Runtime.ExecSync(ctx, id, cmd, 0)
	return append(stdout, stderr...), err
}

// AttachURL asks the runtime where it serves an attach to the running container. Whether a
// terminal is used is the container's own setting, which cannot change once it runs.
func (p *Provider) AttachURL(ctx context.Context, pod *v1.Pod, podUID types.UID, containerName string, s streaming.Streams) (*url.URL, error) {
	id, err := p.runningContainerID(ctx, pod, containerName)
	if err != nil {
		return nil, err
	}
	spec, err := attachTarget(pod, podUID, containerName, id)
	if err != nil {
		return nil, err
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

// attachTarget checks an attach as the kubelet's GetAttach does, in its order: the named
// container must run in the named pod, then a UID in the path must be that pod's (the kubelet's
// exec does not check it, its attach does), then the container must be in the spec. It returns
// the container's spec.
func attachTarget(pod *v1.Pod, requested types.UID, containerName, runningID string) (*v1.Container, error) {
	fullName := pod.Name + "_" + pod.Namespace
	if runningID == "" {
		return nil, fmt.Errorf("container %s not found in pod %s", containerName, fullName)
	}
	if requested != "" && requested != pod.UID {
		return nil, fmt.Errorf("pod %s not found", fullName)
	}
	spec := containerSpec(pod, containerName)
	if spec == nil {
		return nil, fmt.Errorf("container %s not found in pod %s", containerName, fullName)
	}
	return spec, nil
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
// or "" when none runs. The runtime's containers are found by the pod's own UID.
func (p *Provider) runningContainerID(ctx context.Context, pod *v1.Pod, name string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, streamRequestTimeout)
	defer cancel()
	rt, err := p.inspector.inspectPod(ctx, string(pod.UID))
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

// streamPodUID is the UID whose sandbox a port-forward of pod reaches: the pod's own. A UID in
// the request path (/portForward/{namespace}/{pod}/{uid}) that is not the named pod's is
// refused, as the kubelet's getPortForward refuses it (404 "pod not found" from the handler).
func streamPodUID(pod *v1.Pod, requested types.UID) (types.UID, error) {
	if requested != "" && requested != pod.UID {
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
