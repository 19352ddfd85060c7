package provider

import (
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// surplusDeadInstances lists the container instances to remove from the runtime: of each
// container, only the newest instance that is not running is kept (for its logs), as the
// kubelet removes older dead instances as soon as a container dies.
func surplusDeadInstances(rt *podRuntime) []*containerState {
	var out []*containerState
	keptDead := map[string]bool{}
	for _, c := range rt.Containers { // newest first
		if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			continue
		}
		if !keptDead[c.Name] {
			keptDead[c.Name] = true
			continue
		}
		out = append(out, c)
	}
	return out
}

// removeDeadInstances has the container deletor remove what surplusDeadInstances lists, off the
// pod's sync. The previous status keeps their termination state (keptLastState).
func (p *Provider) removeDeadInstances(pod *v1.Pod, rt *podRuntime) {
	for _, c := range surplusDeadInstances(rt) {
		p.deletor.request(deadInstance{ID: c.ID, Container: c.Name, Log: p.podLog(pod)})
	}
}
