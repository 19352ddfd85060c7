package provider

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// containerEnv resolves a container's environment. Literal values pass through; valueFrom
// references that this version cannot resolve make the container wait with
// CreateContainerConfigError rather than start with a wrong environment.
func (p *Provider) containerEnv(pod *v1.Pod, c *v1.Container) ([]*runtimeapi.KeyValue, error) {
	if err := checkMounts(pod, c); err != nil {
		return nil, err
	}
	for _, e := range c.Env {
		if e.ValueFrom != nil {
			return nil, fmt.Errorf("env %q: valueFrom is not supported by this version of vk-cri", e.Name)
		}
	}
	if len(c.EnvFrom) > 0 {
		return nil, fmt.Errorf("envFrom is not supported by this version of vk-cri")
	}
	return literalEnv(c), nil
}
