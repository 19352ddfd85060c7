package translate

import (
	"fmt"
	"hash/fnv"
	"path/filepath"
	"strconv"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-cri/vk-cri/cri"
)

// ContainerHash identifies the parts of a container spec that may change while the pod lives
// (only the image can); a running container whose hash differs is restarted, as the kubelet does.
func ContainerHash(c *v1.Container) string {
	h := fnv.New32a()
	fmt.Fprintf(h, "%s\x00%s", c.Name, c.Image)
	return strconv.FormatUint(uint64(h.Sum32()), 16)
}

// ContainerLogPath is relative to the sandbox's log directory: <name>/<restartCount>.log.
func ContainerLogPath(name string, restartCount int) string {
	return filepath.Join(name, fmt.Sprintf("%d.log", restartCount))
}

// NodeFacts are the node's settings a container's translation reads.
type NodeFacts struct {
	// MemoryCapacity is the node's memory in bytes, the base of the Burstable OOM score.
	MemoryCapacity int64
	// MaskedPaths are the host's default masked paths; nil means the base list.
	MaskedPaths []string
	// SeccompRoot is the directory of Localhost seccomp profiles (<root-dir>/seccomp).
	SeccompRoot string
}

// ContainerInput is one start of one container: the facts found at the time of the start.
type ContainerInput struct {
	Owner        string
	Pod          *v1.Pod
	Container    *v1.Container
	ImageRef     string
	RestartCount int
	Env          ContainerEnvironment
	Image        ImageUser
	Mounts       []*runtimeapi.Mount
	// TargetID, for an ephemeral container with a target, is the runtime ID of the container
	// whose process namespace it joins.
	TargetID string
	// Userns is the pod's user namespace, the sandbox's (the provider's podUsernsOptions).
	Userns *runtimeapi.UserNamespace
}

// ContainerConfig translates one container of a pod into its CRI config. It refuses a
// container whose runAsNonRoot the image breaks, or whose security context cannot be
// expressed; the error is the container's CreateContainerConfigError message.
func ContainerConfig(node NodeFacts, in ContainerInput) (*runtimeapi.ContainerConfig, error) {
	pod, c := in.Pod, in.Container
	if err := verifyRunAsNonRoot(pod, c, in.Image); err != nil {
		return nil, err
	}
	sc, err := containerSecurityContext(node, pod, c, in.Image)
	if err != nil {
		return nil, err
	}
	sc.NamespaceOptions.UsernsOptions = in.Userns
	TargetPIDNamespace(sc, in.TargetID)
	lookup := EnvLookup(in.Env.Values)
	cfg := &runtimeapi.ContainerConfig{
		Metadata:    &runtimeapi.ContainerMetadata{Name: c.Name, Attempt: uint32(in.RestartCount)},
		Image:       &runtimeapi.ImageSpec{Image: in.ImageRef, UserSpecifiedImage: c.Image},
		Command:     ExpandAll(c.Command, lookup),
		Args:        ExpandAll(c.Args, lookup),
		WorkingDir:  c.WorkingDir,
		Envs:        in.Env.List,
		Mounts:      in.Mounts,
		Labels:      cri.ContainerLabels(pod, c.Name, in.Owner),
		Annotations: cri.ContainerAnnotations(pod, c, ContainerHash(c), in.RestartCount),
		LogPath:     ContainerLogPath(c.Name, in.RestartCount),
		Stdin:       c.Stdin,
		StdinOnce:   c.StdinOnce,
		Tty:         c.TTY,
		Linux: &runtimeapi.LinuxContainerConfig{
			Resources:       ContainerResources(node, pod, c),
			SecurityContext: sc,
		},
	}
	IDMapMounts(cfg)
	return cfg, nil
}

// literalEnv is the container's env with plain values only, unexpanded; the environment of
// a start comes from ResolveEnv.
func literalEnv(c *v1.Container) ContainerEnvironment {
	env := ContainerEnvironment{List: make([]*runtimeapi.KeyValue, 0, len(c.Env)), Values: map[string]string{}}
	for _, e := range c.Env {
		if e.ValueFrom != nil {
			continue
		}
		env.List = append(env.List, &runtimeapi.KeyValue{Key: e.Name, Value: []byte(e.Value)})
		env.Values[e.Name] = e.Value
	}
	return env
}
