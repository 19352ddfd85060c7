package status

import (
	v1 "k8s.io/api/core/v1"

	"github.com/vk-cri/vk-cri/provider/podspec"
)

// FindStatus is the status of the named container in the list, if it has one.
func FindStatus(statuses []v1.ContainerStatus, name string) (v1.ContainerStatus, bool) {
	for _, s := range statuses {
		if s.Name == name {
			return s, true
		}
	}
	return v1.ContainerStatus{}, false
}

// lastExit is the exit code a container stopped with, from its current or last termination.
func lastExit(s v1.ContainerStatus) (int32, bool) {
	if t := s.State.Terminated; t != nil {
		return t.ExitCode, true
	}
	if s.State.Waiting != nil && s.LastTerminationState.Terminated != nil {
		return s.LastTerminationState.Terminated.ExitCode, true
	}
	return 0, false
}

// PodPhase computes the phase from container statuses by the kubelet's rules (v1.37, with
// per-container restart rules on). terminal is true once the pod is being torn down or finished,
// so that its containers will not run again whatever the restart policy says.
func PodPhase(pod *v1.Pod, init, regular []v1.ContainerStatus, terminal, initialized bool) v1.PodPhase {
	pendingInit, pendingSidecars := 0, 0
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if podspec.IsSidecar(c) {
			continue
		}
		s, ok := FindStatus(init, c.Name)
		if !ok || s.State.Running != nil {
			pendingInit++
			continue
		}
		code, exited := lastExit(s)
		if !exited {
			pendingInit++
			continue
		}
		if code != 0 && !podspec.ShouldRestart(c, pod, code) {
			return v1.PodFailed
		}
	}

	var unknown, running, waiting, stopped, stoppedForGood, succeeded int
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if !podspec.IsSidecar(c) {
			continue
		}
		s, ok := FindStatus(init, c.Name)
		switch {
		case !ok:
			unknown++
			pendingSidecars++
		case s.State.Running != nil:
			running++
			if s.Started == nil || !*s.Started {
				pendingSidecars++
			}
		case s.State.Waiting != nil && s.LastTerminationState.Terminated == nil:
			waiting++
			pendingSidecars++
		}
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		s, ok := FindStatus(regular, c.Name)
		if !ok {
			unknown++
			continue
		}
		if s.State.Running != nil {
			running++
			continue
		}
		code, exited := lastExit(s)
		if !exited {
			if s.State.Waiting != nil {
				waiting++
			} else {
				unknown++
			}
			continue
		}
		stopped++
		// Only a container that is terminated now counts as succeeded; one waiting to run again
		// after exit 0 does not (the kubelet counts them this way).
		if code == 0 && s.State.Terminated != nil {
			succeeded++
		}
		if !podspec.ShouldRestart(c, pod, code) {
			stoppedForGood++
		}
	}

	switch {
	case pendingInit > 0 || (pendingSidecars > 0 && !initialized), waiting > 0:
		return v1.PodPending
	case running > 0 && unknown == 0:
		return v1.PodRunning
	case running == 0 && stopped > 0 && unknown == 0:
		if terminal || stopped == stoppedForGood {
			if stopped == succeeded {
				return v1.PodSucceeded
			}
			return v1.PodFailed
		}
		// Some container is on its way to a restart.
		return v1.PodRunning
	default:
		return v1.PodPending
	}
}
