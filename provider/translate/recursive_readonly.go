package translate

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// ResolveRecursiveReadOnly decides whether a volume mount is made recursively read-only, as the
// kubelet's ResolveRecursiveReadOnly (kubelet_pods.go): IfPossible when the pod's handler can,
// Enabled or an error when it cannot; a request on a writable mount or with propagation is an
// error (the API refuses such pods already).
func ResolveRecursiveReadOnly(m v1.VolumeMount, handlerSupportsRRO bool) (bool, error) {
	if m.RecursiveReadOnly == nil || *m.RecursiveReadOnly == v1.RecursiveReadOnlyDisabled {
		return false, nil
	}
	if !m.ReadOnly {
		return false, fmt.Errorf("volume %q requested recursive read-only mode, but it is not read-only", m.Name)
	}
	if m.MountPropagation != nil && *m.MountPropagation != v1.MountPropagationNone {
		return false, fmt.Errorf("volume %q requested recursive read-only mode, but it is not compatible with propagation %q",
			m.Name, *m.MountPropagation)
	}
	switch mode := *m.RecursiveReadOnly; mode {
	case v1.RecursiveReadOnlyIfPossible:
		return handlerSupportsRRO, nil
	case v1.RecursiveReadOnlyEnabled:
		if !handlerSupportsRRO {
			return false, fmt.Errorf("volume %q requested recursive read-only mode, but it is not supported by the runtime", m.Name)
		}
		return true, nil
	default:
		return false, fmt.Errorf("unknown recursive read-only mode %q", mode)
	}
}

// ApplyRecursiveReadOnly marks the CRI mounts of the container's volume mounts (mounts[i] is
// VolumeMounts[i], as the volume manager returns them) recursively read-only where
// ResolveRecursiveReadOnly says so. An error is the container's CreateContainerConfigError
// message, in the kubelet's words (makeMounts).
func ApplyRecursiveReadOnly(c *v1.Container, mounts []*runtimeapi.Mount, handlerSupportsRRO bool) error {
	for i, vm := range c.VolumeMounts {
		rro, err := ResolveRecursiveReadOnly(vm, handlerSupportsRRO)
		if err != nil {
			return fmt.Errorf("failed to resolve recursive read-only mode: %w", err)
		}
		if !rro {
			continue
		}
		if i >= len(mounts) || mounts[i].ContainerPath != vm.MountPath {
			return fmt.Errorf("recursive read-only mode of volume %q: its mount is missing", vm.Name)
		}
		mounts[i].RecursiveReadOnly = true
	}
	return nil
}
