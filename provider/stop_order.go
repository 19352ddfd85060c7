package provider

import (
	v1 "k8s.io/api/core/v1"

	"github.com/vk-cri/vk-cri/provider/podspec"
)

// stopPrerequisites says, for each container of a pod being stopped, which running containers
// must have stopped before it gets its SIGTERM: sidecars wait for every regular container and
// for the sidecars declared after them, so that they stop last and in reverse order, as the
// kubelet stops them. Containers not in running have nothing to wait for and hold nobody up.
func stopPrerequisites(pod *v1.Pod, running []string) map[string][]string {
	isRunning := map[string]bool{}
	for _, n := range running {
		isRunning[n] = true
	}
	var regular []string
	for i := range pod.Spec.Containers {
		if n := pod.Spec.Containers[i].Name; isRunning[n] {
			regular = append(regular, n)
		}
	}
	out := map[string][]string{}
	var laterSidecar string
	for i := len(pod.Spec.InitContainers) - 1; i >= 0; i-- {
		c := &pod.Spec.InitContainers[i]
		if !podspec.IsSidecar(c) {
			continue
		}
		if isRunning[c.Name] {
			deps := append([]string(nil), regular...)
			// Only the next sidecar in declaration order counts; one that is not running
			// holds nobody up, as with the kubelet.
			if laterSidecar != "" && isRunning[laterSidecar] {
				deps = append(deps, laterSidecar)
			}
			if len(deps) > 0 {
				out[c.Name] = deps
			}
		}
		laterSidecar = c.Name
	}
	return out
}

// specOf finds a container's spec among the pod's containers and init containers.
func specOf(pod *v1.Pod, name string) *v1.Container {
	if pod == nil {
		return nil
	}
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return &pod.Spec.Containers[i]
		}
	}
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			return &pod.Spec.InitContainers[i]
		}
	}
	return nil
}
