package provider

import (
	"context"
	"os"
	"path/filepath"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-cri/vk-cri/provider/downward"
	"github.com/vk-cri/vk-cri/provider/translate"
)

// nodeHostsPath is the node's hosts file that host-network pods see.
const nodeHostsPath = "/etc/hosts"

// nodeCapacity is what container configs read of the node's resources; it is known once the
// node provider has read the host.
type nodeCapacity struct {
	MemoryBytes int64
	Allocatable v1.ResourceList
}

// setNodeCapacity records the node's memory and allocatable for container configs.
func (p *Provider) setNodeCapacity(c nodeCapacity) {
	if first := p.capacity.Swap(&c) == nil; first && p.pods != nil {
		// Resizes wait for the node's allocatable.
		p.retryPendingResizes()
	}
}

// currentNodeFacts is what container configs read of the node now (masked paths, seccomp root,
// memory capacity), and the node's allocatable (nil before the host was read).
func (p *Provider) currentNodeFacts() (translate.NodeFacts, v1.ResourceList) {
	f := translate.NodeFacts{MaskedPaths: p.maskedPaths, SeccompRoot: filepath.Join(p.cfg.RootDir, "seccomp")}
	if c := p.capacity.Load(); c != nil {
		f.MemoryCapacity = c.MemoryBytes
		return f, c.Allocatable
	}
	return f, nil
}

// prepareContainer gathers what one start of a container needs (its environment, the image's
// user, the /etc/hosts mount) and translates it into the CRI config. An error is the message
// of the container's CreateContainerConfigError.
func (p *Provider) prepareContainer(ctx context.Context, pod *v1.Pod, c *v1.Container, imageRef string, restartCount int, rt *podRuntime) (*runtimeapi.ContainerConfig, error) {
	facts, allocatable := p.currentNodeFacts()
	var podIPs []string
	if pod.Spec.HostNetwork {
		podIPs = p.cfg.NodeIPs
	} else if sb := rt.newestSandbox(); sb != nil {
		podIPs = sb.IPs
	}
	var services []*v1.Service
	if p.cfg.Objects != nil {
		var err error
		if services, err = p.cfg.Objects.Services(); err != nil {
			return nil, err
		}
	}
	env, err := translate.ResolveEnv(ctx, p.cfg.Objects, translate.EnvInput{
		Pod:         pod,
		Container:   c,
		Runtime:     downward.RuntimeInfo{PodIPs: podIPs, HostIPs: p.cfg.NodeIPs},
		Allocatable: allocatable,
		Services:    services,
	})
	if err != nil {
		return nil, err
	}
	img, err := p.rt.ImagePresence(ctx, imageRef)
	if err != nil {
		return nil, err
	}
	user := translate.ImageUserOf(img)
	mounts, err := p.containerMounts(pod, c, env.Values)
	if err != nil {
		return nil, err
	}
	if err := translate.ApplyRecursiveReadOnly(c, mounts, p.supportsRecursiveReadOnly(pod)); err != nil {
		return nil, err
	}
	hosts, err := writeEtcHosts(p.cfg.RootDir, nodeHostsPath, pod, podIPs, p.cfg.ClusterDomain)
	if err != nil {
		return nil, err
	}
	// A volume mounted on /etc/hosts takes the place of the kubelet-managed file.
	if hosts != nil && !mountsPath(c, hosts.ContainerPath) {
		mounts = append(mounts, hosts)
	}
	targetID, err := ephemeralTargetID(pod, c.Name, rt)
	if err != nil {
		return nil, err
	}
	userns, err := p.podUsernsOptions(pod)
	if err != nil {
		return nil, err
	}
	return translate.ContainerConfig(facts, translate.ContainerInput{
		Owner:        p.cfg.NodeName,
		Pod:          pod,
		Container:    c,
		ImageRef:     imageRef,
		RestartCount: restartCount,
		Env:          env,
		Image:        user,
		Mounts:       mounts,
		TargetID:     targetID,
		Userns:       userns,
	})
}

// hostMaskedPaths is the host's default masked path list.
func hostMaskedPaths() []string {
	return translate.DefaultMaskedPaths(func(p string) bool {
		_, err := os.Stat(p)
		return err == nil
	})
}
