package status

import (
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vk-cri/vk-cri/provider/podspec"
)

// KubeletOwnedCondition reports whether the kubelet alone writes a pod condition of this type;
// the others (readiness gates, DisruptionTarget written by a controller ...) belong to whoever
// wrote them, and the kubelet keeps them as they are in the API.
func KubeletOwnedCondition(t v1.PodConditionType) bool {
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

// ForeignConditions are the conditions of a status the kubelet does not own, in their order.
func ForeignConditions(conds []v1.PodCondition) []v1.PodCondition {
	out := []v1.PodCondition{}
	for _, c := range conds {
		if !KubeletOwnedCondition(c.Type) {
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
	out := ForeignConditions(apiConds)
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
		if KubeletOwnedCondition(c.Type) {
			out = append(out, c)
		}
	}
	return out
}

// Pod condition reasons, as the kubelet writes them.
const (
	reasonPodCompleted             = "PodCompleted"
	reasonPodFailed                = "PodFailed"
	reasonContainersNotReady       = "ContainersNotReady"
	reasonContainersNotInitialized = "ContainersNotInitialized"
)

// ReadyCondition is ContainersReady, unless a readiness gate's condition is missing or not True.
func ReadyCondition(pod *v1.Pod, conds []v1.PodCondition, containersReady v1.PodCondition) v1.PodCondition {
	ready := containersReady
	ready.Type = v1.PodReady
	if ready.Status != v1.ConditionTrue {
		return ready
	}
	var msgs []string
	for _, g := range pod.Spec.ReadinessGates {
		var found *v1.PodCondition
		for i := range conds {
			if conds[i].Type == g.ConditionType {
				found = &conds[i]
			}
		}
		switch {
		case found == nil:
			msgs = append(msgs, fmt.Sprintf("corresponding condition of pod readiness gate %q does not exist.", string(g.ConditionType)))
		case found.Status != v1.ConditionTrue:
			msgs = append(msgs, fmt.Sprintf("the status of pod readiness gate %q is not \"True\", but %v", string(g.ConditionType), found.Status))
		}
	}
	if len(msgs) > 0 {
		return v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionFalse, Reason: "ReadinessGatesNotReady", Message: strings.Join(msgs, ", ")}
	}
	return ready
}

// TransitionTime is when condition c last changed: the old condition's time while its status
// is the same, else now.
func TransitionTime(old []v1.PodCondition, c v1.PodCondition, now time.Time) metav1.Time {
	for _, o := range old {
		if o.Type == c.Type && o.Status == c.Status && !o.LastTransitionTime.IsZero() {
			return o.LastTransitionTime
		}
	}
	return metav1.NewTime(now)
}

func anyRegularStarted(regular []v1.ContainerStatus) bool {
	for _, s := range regular {
		if s.State.Running != nil || s.State.Terminated != nil || s.LastTerminationState.Terminated != nil {
			return true
		}
	}
	return false
}

// InitializedCondition is the pod's Initialized condition from its init and regular container
// statuses (pkg/kubelet/status/generate.go GeneratePodInitializedCondition).
func InitializedCondition(pod *v1.Pod, init, regular []v1.ContainerStatus, phase v1.PodPhase) v1.PodCondition {
	var unknown, incomplete []string
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		s, ok := FindStatus(init, c.Name)
		switch {
		case !ok:
			unknown = append(unknown, c.Name)
		case podspec.IsSidecar(c) && (s.Started == nil || !*s.Started):
			incomplete = append(incomplete, c.Name)
		case !podspec.IsSidecar(c) && !s.Ready:
			incomplete = append(incomplete, c.Name)
		}
	}
	if phase == v1.PodSucceeded && len(unknown) == 0 {
		return v1.PodCondition{Type: v1.PodInitialized, Status: v1.ConditionTrue, Reason: reasonPodCompleted}
	}
	if anyRegularStarted(regular) {
		return v1.PodCondition{Type: v1.PodInitialized, Status: v1.ConditionTrue}
	}
	if msg := listMessage(unknown, "unknown", incomplete, "incomplete"); msg != "" {
		return v1.PodCondition{Type: v1.PodInitialized, Status: v1.ConditionFalse, Reason: reasonContainersNotInitialized, Message: msg}
	}
	return v1.PodCondition{Type: v1.PodInitialized, Status: v1.ConditionTrue}
}

// ContainersReadyCondition is the pod's ContainersReady condition: every regular container and
// sidecar ready, false once the pod is terminal (pkg/kubelet/status/generate.go
// GenerateContainersReadyCondition).
func ContainersReadyCondition(pod *v1.Pod, init, regular []v1.ContainerStatus, phase v1.PodPhase) v1.PodCondition {
	var unknown, unready []string
	check := func(list []v1.ContainerStatus, name string) {
		if s, ok := FindStatus(list, name); !ok {
			unknown = append(unknown, name)
		} else if !s.Ready {
			unready = append(unready, name)
		}
	}
	for i := range pod.Spec.InitContainers {
		if podspec.IsSidecar(&pod.Spec.InitContainers[i]) {
			check(init, pod.Spec.InitContainers[i].Name)
		}
	}
	for i := range pod.Spec.Containers {
		check(regular, pod.Spec.Containers[i].Name)
	}
	switch {
	case phase == v1.PodFailed:
		return v1.PodCondition{Type: v1.ContainersReady, Status: v1.ConditionFalse, Reason: reasonPodFailed}
	case phase == v1.PodSucceeded && len(unknown) == 0:
		return v1.PodCondition{Type: v1.ContainersReady, Status: v1.ConditionFalse, Reason: reasonPodCompleted}
	}
	if msg := listMessage(unknown, "unknown", unready, "unready"); msg != "" {
		return v1.PodCondition{Type: v1.ContainersReady, Status: v1.ConditionFalse, Reason: reasonContainersNotReady, Message: msg}
	}
	return v1.PodCondition{Type: v1.ContainersReady, Status: v1.ConditionTrue}
}

// listMessage renders "containers with unknown status: [a b], containers with unready status: [c]".
func listMessage(a []string, aWhat string, b []string, bWhat string) string {
	var parts []string
	if len(a) > 0 {
		parts = append(parts, fmt.Sprintf("containers with %s status: %v", aWhat, a))
	}
	if len(b) > 0 {
		parts = append(parts, fmt.Sprintf("containers with %s status: %v", bWhat, b))
	}
	return strings.Join(parts, ", ")
}
