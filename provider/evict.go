package provider

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vk-cri/vk-cri/provider/translate"
)

// PressureAdmission decides whether a new pod may start under the node's current pressure
// (the eviction manager's admission): the rejection's reason and message, or "" to admit.
type PressureAdmission func(pod *v1.Pod, bestEffort bool) (reason, message string)

// admitUnderPressure applies the pressure admission, if any.
func (p *Provider) admitUnderPressure(pod *v1.Pod) *admissionRejection {
	if p.cfg.PressureAdmission == nil {
		return nil
	}
	reason, message := p.cfg.PressureAdmission(pod, translate.PodQOS(pod) == v1.PodQOSBestEffort)
	if reason == "" {
		return nil
	}
	return &admissionRejection{Reason: reason, Message: message}
}

// reasonEvicted is the pod status reason (and event reason) of an eviction, as the kubelet's.
const reasonEvicted = "Evicted"

// eviction is a request to end a pod because the node is short of a resource.
type eviction struct {
	message string
	grace   int64
	// condition is the DisruptionTarget condition the evicted pod carries.
	condition v1.PodCondition
}

// EvictPod begins the pod's termination for the eviction manager; its worker carries it out on
// the one termination path (terminate): its containers are stopped within grace seconds, its
// volumes torn down, it never restarts, and it stays in the API as Failed with reason Evicted,
// the message and the condition (none when it has no type). It reports false when the pod is
// not running here (gone, being deleted, already terminating or finished).
func (p *Provider) EvictPod(pod *v1.Pod, message string, condition v1.PodCondition, grace int64) bool {
	rec, ok := p.pods.get(pod.UID)
	if !ok {
		return false
	}
	rec.mu.Lock()
	if rec.pod == nil || rec.lifecycle.deletion != nil || rec.lifecycle.state != podSyncing {
		rec.mu.Unlock()
		return false
	}
	condition.ObservedGeneration = rec.pod.Generation
	if condition.Type != "" && condition.LastTransitionTime.IsZero() {
		condition.LastTransitionTime = metav1.Now()
	}
	ev := &eviction{message: message, grace: grace, condition: condition}
	// Always an arrow of the drawing: syncing → terminating, for the eviction.
	_ = rec.lifecycle.transition(lifecycleChange{to: podTerminating, reason: terminationEvicted, eviction: ev})
	spec := rec.pod
	rec.mu.Unlock()
	p.recorder.Eventf(spec, v1.EventTypeWarning, reasonEvicted, "%s", message)
	p.podLog(spec).WithField("message", message).Warn("evicting pod")
	rec.poke()
	return true
}

// applyEviction marks a status as the kubelet marks an evicted pod's.
func applyEviction(st *v1.PodStatus, ev *eviction) {
	st.Phase = v1.PodFailed
	st.Reason = reasonEvicted
	st.Message = ev.message
	if ev.condition.Type == "" {
		return // an eviction for the pod's own usage (an emptyDir over its sizeLimit) sets none
	}
	for i := range st.Conditions {
		if st.Conditions[i].Type == v1.DisruptionTarget {
			st.Conditions[i] = ev.condition
			return
		}
	}
	st.Conditions = append(st.Conditions, ev.condition)
}
