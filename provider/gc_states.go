package provider

import "k8s.io/apimachinery/pkg/types"

// ShouldPodContentBeRemoved tells the garbage collectors (package gc) that everything of a pod
// may go: vk-cri does not know the pod (it was deleted, or is another run's leftover), or the
// pod was removed. The kubelet's pod workers answer the same question (pod_workers.go).
func (p *Provider) ShouldPodContentBeRemoved(uid types.UID) bool {
	rec, ok := p.pods.get(uid)
	if !ok {
		return true
	}
	return rec.lifecycleNow().state == podRemoved
}

// ShouldPodRuntimeBeRemoved tells the garbage collectors that a pod's containers never run
// again: it is unknown, or terminated (deleted or not). Under disk pressure their dead
// containers may go.
func (p *Provider) ShouldPodRuntimeBeRemoved(uid types.UID) bool {
	rec, ok := p.pods.get(uid)
	if !ok {
		return true
	}
	return rec.lifecycleNow().state >= podTerminated
}
