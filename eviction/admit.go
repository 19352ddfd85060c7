package eviction

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"
)

// systemCriticalPriority is the lowest priority of the system-critical priority classes.
const systemCriticalPriority = 2_000_000_000

// isCritical tells the pods the kubelet never rejects or evicts for pressure: mirror pods of
// static pods (vk-cri runs no static pods itself), and pods of a system-critical priority.
func isCritical(pod *v1.Pod) bool {
	if _, mirror := pod.Annotations[v1.MirrorPodAnnotationKey]; mirror {
		return true
	}
	return pod.Spec.Priority != nil && *pod.Spec.Priority >= systemCriticalPriority
}

// Admit decides, as the kubelet's eviction manager does, whether a new pod may start while the
// node is under pressure: under memory pressure alone, all but BestEffort pods (and those
// tolerating the memory-pressure taint); under any other pressure, only critical pods. It
// returns the rejection's reason and message, or empty strings to admit.
func Admit(pod *v1.Pod, pressure []v1.NodeConditionType, bestEffort bool) (reason, message string) {
	if len(pressure) == 0 || isCritical(pod) {
		return "", ""
	}
	if len(pressure) == 1 && pressure[0] == v1.NodeMemoryPressure {
		if !bestEffort {
			return "", ""
		}
		taint := &v1.Taint{Key: v1.TaintNodeMemoryPressure, Effect: v1.TaintEffectNoSchedule}
		if corev1helpers.TolerationsTolerateTaint(klog.Background(), pod.Spec.Tolerations, taint, false) {
			return "", ""
		}
	}
	return reasonEvicted, fmt.Sprintf("The node had condition: %v. ", pressure)
}

// reasonEvicted is the kubelet's reason for evictions and pressure rejections.
const reasonEvicted = "Evicted"

// PressureList orders the pressure conditions that are True as the kubelet lists them.
func PressureList(p map[v1.NodeConditionType]bool) []v1.NodeConditionType {
	var out []v1.NodeConditionType
	for _, c := range []v1.NodeConditionType{v1.NodeMemoryPressure, v1.NodeDiskPressure, v1.NodePIDPressure} {
		if p[c] {
			out = append(out, c)
		}
	}
	return out
}
