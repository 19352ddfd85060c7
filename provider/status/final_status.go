package status

import (
	v1 "k8s.io/api/core/v1"

	"github.com/vk-cri/vk-cri/provider/podspec"
)

// Reason and message of a container whose state is unknown when its pod's termination ends.
const (
	reasonStatusUnknown  = "ContainerStatusUnknown"
	messageStatusUnknown = "The container could not be located when the pod was terminated"
)

// FinalStatus is the status of a pod whose termination is complete, as the kubelet's status
// manager writes it then: once the pod has initialised, a container with no terminated state is
// reported terminated with an unknown status (exit 137); so are init containers up to the last
// one that started; and a pod not yet in a terminal phase is Failed. Conditions stay as they were.
//
// Whether the pod has initialised is judged from seen, the pod's status as the API gave it with
// the last change of its spec or metadata (its deletion), not from st: the kubelet judges from
// the pod its pod worker was given, whose status is the API's at that moment. An init container
// that exited 0 only because the deletion stopped it does not make the pod initialised.
func FinalStatus(pod *v1.Pod, seen, st v1.PodStatus) v1.PodStatus {
	unknown := func() v1.ContainerState {
		return v1.ContainerState{Terminated: &v1.ContainerStateTerminated{Reason: reasonStatusUnknown, Message: messageStatusUnknown, ExitCode: 137}}
	}
	if hasInitialized(pod, seen) {
		for i := range st.ContainerStatuses {
			if st.ContainerStatuses[i].State.Terminated == nil {
				st.ContainerStatuses[i].State = unknown()
			}
		}
	}
	last := 0
	for i, s := range st.InitContainerStatuses {
		if s.State.Waiting == nil || s.LastTerminationState.Terminated != nil {
			last = i
		}
	}
	for i := range st.InitContainerStatuses {
		if i <= last && st.InitContainerStatuses[i].State.Terminated == nil {
			st.InitContainerStatuses[i].State = unknown()
		}
	}
	if st.Phase == v1.PodPending || st.Phase == v1.PodRunning || st.Phase == "" {
		st.Phase = v1.PodFailed
	}
	return st
}

// hasInitialized reports whether a pod got past its init containers, judged from its status.
func hasInitialized(pod *v1.Pod, st v1.PodStatus) bool {
	if len(pod.Spec.InitContainers) == 0 {
		return true
	}
	for _, s := range st.ContainerStatuses {
		if s.LastTerminationState.Terminated != nil || s.State.Waiting == nil {
			return true
		}
	}
	n := len(st.InitContainerStatuses)
	if n == 0 || n != len(pod.Spec.InitContainers) {
		return false
	}
	s, c := st.InitContainerStatuses[n-1], &pod.Spec.InitContainers[n-1]
	if podspec.IsSidecar(c) {
		return s.State.Running != nil && s.Started != nil && *s.Started
	}
	for _, t := range []*v1.ContainerStateTerminated{s.LastTerminationState.Terminated, s.State.Terminated} {
		if t != nil && t.ExitCode == 0 {
			return true
		}
	}
	return false
}
