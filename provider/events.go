package provider

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
)

// Event reasons, as the kubelet records them.
const (
	eventPulling           = "Pulling"
	eventPulled            = "Pulled"
	eventFailed            = "Failed"
	eventInspectFailed     = "InspectFailed"
	eventBackOff           = "BackOff"
	eventErrImageNeverPull = "ErrImageNeverPull"
	eventCreated           = "Created"
	eventStarted           = "Started"
	eventKilling           = "Killing"
	eventSandboxChanged    = "SandboxChanged"
	eventFailedSandbox     = "FailedCreatePodSandBox"
)

// containerRef points an event at one container of a pod, as kubectl describe shows it.
func containerRef(pod *v1.Pod, name string, isInit bool) *v1.ObjectReference {
	field := fmt.Sprintf("spec.containers{%s}", name)
	switch {
	case isInit:
		field = fmt.Sprintf("spec.initContainers{%s}", name)
	case ephemeralSpec(pod, name) != nil:
		field = fmt.Sprintf("spec.ephemeralContainers{%s}", name)
	}
	return &v1.ObjectReference{
		Kind:            "Pod",
		APIVersion:      "v1",
		Namespace:       pod.Namespace,
		Name:            pod.Name,
		UID:             pod.UID,
		ResourceVersion: pod.ResourceVersion,
		FieldPath:       field,
	}
}

func (p *Provider) containerEvent(pod *v1.Pod, name string, isInit bool, eventType, reason, format string, args ...any) {
	if p.recorder == nil {
		return
	}
	p.recorder.Eventf(containerRef(pod, name, isInit), eventType, reason, format, args...)
}

func (p *Provider) podEvent(pod *v1.Pod, eventType, reason, format string, args ...any) {
	if p.recorder == nil {
		return
	}
	p.recorder.Eventf(pod, eventType, reason, format, args...)
}
