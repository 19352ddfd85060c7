package volumes

import (
	"time"
)

// retryPolicy is how long a volume that failed waits before it is tried again.
type retryPolicy struct {
	// Initial is the wait after the first failure.
	Initial time.Duration
	// Factor multiplies the last wait after each further failure (0: the wait stays Initial).
	Factor float64
	// Max caps the wait (0: no cap).
	Max time.Duration
	// Jitter adds up to this fraction of the wait, at random.
	Jitter float64
}

// mountRetry is the kubelet's back-off for a volume whose set-up failed (its nestedpendingoperations,
// per volume and pod): 500 ms after the first failure, then twice the last wait, at most 2 min 2 s.
// Each attempt that fails is a FailedMount event; a volume whose object appears meanwhile is
// mounted at the next attempt, not before.
func mountRetry() retryPolicy {
	return retryPolicy{Initial: 500 * time.Millisecond, Factor: 2, Max: 2*time.Minute + 2*time.Second}
}

// claimRetry is the kubelet's timing for a claim it cannot resolve (unbound, missing): its
// desired-state populator records the error, the pod's sync fails with it at once, and the pod
// worker syncs again after its error back-off of 10 s plus up to 50 % jitter.
func claimRetry() retryPolicy {
	return retryPolicy{Initial: 10 * time.Second, Jitter: 0.5}
}

// next is the wait (before jitter) after a failure that followed a wait of prev (0: the first).
func (p retryPolicy) next(prev time.Duration) time.Duration {
	if prev == 0 || p.Factor == 0 {
		return p.Initial
	}
	d := time.Duration(float64(prev) * p.Factor)
	if p.Max > 0 && d > p.Max {
		d = p.Max
	}
	return d
}

// retryState is a volume whose last attempt failed.
type retryState struct {
	// Wait is the policy's wait after that failure, before jitter.
	Wait time.Duration
	// Due is when the volume may be tried again.
	Due time.Time
}

// afterFailure is the state after a failure at now, given the state before (zero: none).
func (p retryPolicy) afterFailure(before retryState, now time.Time, jitter func(time.Duration, float64) time.Duration) retryState {
	wait := p.next(before.Wait)
	d := wait
	if p.Jitter > 0 {
		d = jitter(wait, p.Jitter)
	}
	return retryState{Wait: wait, Due: now.Add(d)}
}
