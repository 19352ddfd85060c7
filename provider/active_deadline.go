package provider

import (
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The pod status reason and message, and the event, of a pod past its activeDeadlineSeconds.
const (
	reasonDeadlineExceeded  = "DeadlineExceeded"
	messageDeadlineExceeded = "Pod was active on the node longer than the specified deadline"
)

// podFailure is why vk-cri itself ended a pod Failed (the pod status's reason and message).
type podFailure struct {
	Reason, Message string
}

// activeDeadline reports whether the pod has been active on the node (since its status's
// startTime) for at least its activeDeadlineSeconds; if not, left is how long until it has, or
// zero when there is no deadline to watch. The spec's current value counts, so raising or
// lowering it by an update moves the deadline.
func activeDeadline(pod *v1.Pod, start *metav1.Time, now time.Time) (exceeded bool, left time.Duration) {
	if pod.Spec.ActiveDeadlineSeconds == nil || start == nil || start.IsZero() {
		return false, 0
	}
	allowed := time.Duration(*pod.Spec.ActiveDeadlineSeconds) * time.Second
	active := now.Sub(start.Time)
	if active >= allowed {
		return true, 0
	}
	return false, allowed - active
}
