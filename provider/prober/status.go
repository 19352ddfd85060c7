package prober

import (
	v1 "k8s.io/api/core/v1"
)

// UpdatePodStatus sets the Started and Ready fields of the pod's container statuses from the
// probes, as the kubelet does. pod.Status is the status reported before; s is the new one,
// generated from the runtime. A container is started once running and its startup probe (if
// any) succeeded; it is ready once started, running and its readiness probe (if any)
// succeeded. Regular init containers keep what s says.
func (m *Manager) UpdatePodStatus(pod *v1.Pod, s *v1.PodStatus) {
	for i := range s.ContainerStatuses {
		if spec := containerSpec(pod.Spec.Containers, s.ContainerStatuses[i].Name); spec != nil {
			m.updateContainer(pod, spec, &s.ContainerStatuses[i], pod.Status.ContainerStatuses)
		}
	}
	for i := range s.InitContainerStatuses {
		spec := containerSpec(pod.Spec.InitContainers, s.InitContainerStatuses[i].Name)
		if spec == nil {
			continue
		}
		if spec.RestartPolicy == nil || *spec.RestartPolicy != v1.ContainerRestartPolicyAlways {
			cs := &s.InitContainerStatuses[i]
			started := cs.State.Running != nil
			cs.Started = &started
			continue
		}
		m.updateContainer(pod, spec, &s.InitContainerStatuses[i], pod.Status.InitContainerStatuses)
	}
}

func (m *Manager) updateContainer(pod *v1.Pod, spec *v1.Container, cs *v1.ContainerStatus, before []v1.ContainerStatus) {
	running := cs.State.Running != nil
	// The kubelet carries a running container's started flag over from the last status (so that
	// a restart of the agent does not make it start over); the probes decide the rest.
	cs.Started = nil
	if running {
		if old := containerStatus(before, cs.Name); old != nil && old.Started != nil {
			v := *old.Started
			cs.Started = &v
		}
	}
	started := m.isStarted(pod, cs)
	cs.Started = &started
	if !started || !running {
		cs.Ready = false
		return
	}
	if r, ok := m.Result(Readiness, cs.ContainerID); ok && r == Success {
		cs.Ready = true
		return
	}
	_, probed := m.worker(pod.UID, cs.Name, Readiness)
	ready := !probed
	if m.ranBeforeStart(cs) {
		// A container that ran before vk-cri restarted and has no verdict yet keeps the pod's
		// readiness as the API last saw it.
		if _, ok := m.Result(Readiness, cs.ContainerID); !ok {
			ready = true
		}
		if spec.ReadinessProbe != nil && !podReady(pod) {
			ready = false
		}
	}
	cs.Ready = ready
}

func (m *Manager) isStarted(pod *v1.Pod, cs *v1.ContainerStatus) bool {
	if cs.State.Running == nil {
		return false
	}
	if r, ok := m.Result(Startup, cs.ContainerID); ok {
		return r == Success
	}
	if cs.Started != nil && *cs.Started {
		return true
	}
	_, probed := m.worker(pod.UID, cs.Name, Startup)
	return !probed
}

func (m *Manager) ranBeforeStart(cs *v1.ContainerStatus) bool {
	if cs.State.Running == nil {
		return false
	}
	t := cs.State.Running.StartedAt.Time
	return !t.IsZero() && t.Before(m.start.Add(-restartGrace))
}

// TriggerUnready runs at once the readiness probes of the started, running containers the
// status shows not ready, instead of waiting for their next period. Call it once the status is
// what StatusSource returns.
func (m *Manager) TriggerUnready(pod *v1.Pod, s *v1.PodStatus) {
	for _, list := range [][]v1.ContainerStatus{s.ContainerStatuses, s.InitContainerStatuses} {
		for i := range list {
			cs := &list[i]
			if cs.Ready || cs.State.Running == nil || cs.Started == nil || !*cs.Started {
				continue
			}
			if w, ok := m.worker(pod.UID, cs.Name, Readiness); ok {
				w.trigger()
			}
		}
	}
}

func podReady(pod *v1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.PodReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

func containerSpec(list []v1.Container, name string) *v1.Container {
	for i := range list {
		if list[i].Name == name {
			return &list[i]
		}
	}
	return nil
}

func containerStatus(list []v1.ContainerStatus, name string) *v1.ContainerStatus {
	for i := range list {
		if list[i].Name == name {
			return &list[i]
		}
	}
	return nil
}
