package provider

import (
	"time"

	"k8s.io/client-go/util/flowcontrol"
)

// The kubelet's crash-loop and image-pull back-off: 10 s doubling to 5 min.
const (
	backoffInitial = 10 * time.Second
	backoffMax     = 300 * time.Second
)

// flowBackoff adapts client-go's Backoff to restartBackoff, the way the kubelet uses it: a
// container that finished at t waits Get(key) after t; the first restart is immediate.
type flowBackoff struct {
	b *flowcontrol.Backoff
}

func newFlowBackoff() flowBackoff {
	return flowBackoff{b: flowcontrol.NewBackOff(backoffInitial, backoffMax)}
}

func (f flowBackoff) InBackoff(key string, finishedAt time.Time) (period, remaining time.Duration, in bool) {
	if !f.b.IsInBackOffSince(key, finishedAt) {
		return 0, 0, false
	}
	period = f.b.Get(key)
	remaining = time.Until(finishedAt.Add(period))
	if remaining <= 0 {
		remaining = time.Millisecond
	}
	return period, remaining, true
}

// Restarted records a restart after a finish at finishedAt, doubling the next wait.
func (f flowBackoff) Restarted(key string, finishedAt time.Time) {
	f.b.Next(key, finishedAt)
}
