package provider

import (
	"fmt"
	"hash/fnv"
	"path/filepath"
	"strconv"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-cri/vk-cri/cri"
)

// containerHash identifies the parts of a container spec that may change while the pod lives
// (only the image can); a running container whose hash differs is restarted, as the kubelet does.
func containerHash(c *v1.Container) string {
	h := fnv.New32a()
	fmt.Fprintf(h, "%s\x00%s", c.Name, c.Image)
	return strconv.FormatUint(uint64(h.Sum32()), 16)
}

// containerLogPath is relative to the sandbox's log directory: <name>/<restartCount>.log.
func containerLogPath(name string, restartCount int) string {
	return filepath.Join(name, fmt.Sprintf("%d.log", restartCount))
}

// containerConfig translates one container of a pod into its CRI config. env is the resolved
// environment, in the order the container declares it.
func containerConfig(owner string, pod *v1.Pod, c *v1.Container, imageRef string, restartCount int, env []*runtimeapi.KeyValue) *runtimeapi.ContainerConfig {
	cfg := &runtimeapi.ContainerConfig{
		Metadata:    &runtimeapi.ContainerMetadata{Name: c.Name, Attempt: uint32(restartCount)},
		Image:       &runtimeapi.ImageSpec{Image: imageRef, UserSpecifiedImage: c.Image},
		Command:     c.Command,
		Args:        c.Args,
		WorkingDir:  c.WorkingDir,
		Envs:        env,
		Labels:      cri.ContainerLabels(pod, c.Name, owner),
		Annotations: cri.ContainerAnnotations(pod, c, containerHash(c), restartCount),
		LogPath:     containerLogPath(c.Name, restartCount),
		Stdin:       c.Stdin,
		StdinOnce:   c.StdinOnce,
		Tty:         c.TTY,
		Linux: &runtimeapi.LinuxContainerConfig{
			SecurityContext: containerSecurityContext(pod, c),
		},
	}
	return cfg
}

// containerSecurityContext carries the namespaces the container shares with its pod and the
// plain identity settings; the pod-level values apply unless the container overrides them.
func containerSecurityContext(pod *v1.Pod, c *v1.Container) *runtimeapi.LinuxContainerSecurityContext {
	sc := &runtimeapi.LinuxContainerSecurityContext{NamespaceOptions: namespaceOptions(pod)}
	if psc := pod.Spec.SecurityContext; psc != nil {
		id := podIdentityOf(psc)
		sc.RunAsUser, sc.RunAsGroup, sc.SupplementalGroups = id.user, id.group, id.groups
	}
	if csc := c.SecurityContext; csc != nil {
		if csc.RunAsUser != nil {
			sc.RunAsUser = &runtimeapi.Int64Value{Value: *csc.RunAsUser}
		}
		if csc.RunAsGroup != nil {
			sc.RunAsGroup = &runtimeapi.Int64Value{Value: *csc.RunAsGroup}
		}
		if csc.Privileged != nil {
			sc.Privileged = *csc.Privileged
		}
		if csc.ReadOnlyRootFilesystem != nil {
			sc.ReadonlyRootfs = *csc.ReadOnlyRootFilesystem
		}
	}
	return sc
}

// literalEnv is the container's env with plain values; valueFrom references are resolved by
// the env resolver, not here.
func literalEnv(c *v1.Container) []*runtimeapi.KeyValue {
	out := make([]*runtimeapi.KeyValue, 0, len(c.Env))
	for _, e := range c.Env {
		if e.ValueFrom != nil {
			continue
		}
		out = append(out, &runtimeapi.KeyValue{Key: e.Name, Value: []byte(e.Value)})
	}
	return out
}
