package provider

import (
	v1 "k8s.io/api/core/v1"
)

// kubeletOwnedCondition reports whether the kubelet alone writes a pod condition of this type;
// the others (readiness gates, DisruptionTarget written by a controller ...) belong to whoever
// wrote them, and the kubelet keeps them as they are in the API.
func kubeletOwnedCondition(t v1.PodConditionType) bool {
	switch t {
	case v1.PodReadyToStartContainers, v1.PodInitialized, v1.ContainersReady, v1.PodReady, v1.PodScheduled,
		v1.PodResizePending, v1.PodResizeInProgress:
		return true
	}
	return false
}

// sharedCondition reports whether both the kubelet and others write a condition of this type:
// the kubelet's own value (an eviction's DisruptionTarget) wins over the API's.
func sharedCondition(t v1.PodConditionType) bool {
	return t == v1.DisruptionTarget
}

// foreignConditions are the conditions of a status the kubelet does not own, in their order.
func foreignConditions(conds []v1.PodCondition) []v1.PodCondition {
	out := []v1.PodCondition{}
	for _, c := range conds {
		if !kubeletOwnedCondition(c.Type) {
			out = append(out, *c.DeepCopy())
		}
	}
	return out
}

// MergeConditions is the condition list to write over a pod's status in the API (apiConds) when
// vk-cri reports ours: like the kubelet's status manager, the conditions it does not own are the
// API's (someone else may have written a readiness gate's condition since vk-cri last looked),
// except shared ones vk-cri set itself, then vk-cri's own, in its order.
func MergeConditions(apiConds, ours []v1.PodCondition) []v1.PodCondition {
	out := foreignConditions(apiConds)
	for _, c := range ours {
		if !sharedCondition(c.Type) {
			continue
		}
		replaced := false
		for i := range out {
			if out[i].Type == c.Type {
				out[i], replaced = c, true
			}
		}
		if !replaced {
			out = append(out, c)
		}
	}
	for _, c := range ours {
		if kubeletOwnedCondition(c.Type) {
			out = append(out, c)
		}
	}
	return out
}
