package provider

import (
	"testing"
	"time"

	"k8s.io/client-go/util/flowcontrol"
	testingclock "k8s.io/utils/clock/testing"
)

// The adapter over client-go's Backoff, driven by a fake clock. Finish times lie far in the past
// so that the wall-clock "remaining" is always clamped to its 1ms floor, keeping the test
// independent of the real time.
func TestFlowBackoff(t *testing.T) {
	finished := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := testingclock.NewFakeClock(finished)
	f := flowBackoff{b: flowcontrol.NewFakeBackOff(backoffInitial, backoffMax, clock)}
	const key = "web_default_uid-1_app"

	if _, _, in := f.InBackoff(key, finished); in {
		t.Fatal("a container that never restarted is in back-off")
	}

	// First restart: the next one waits 10s after the finish.
	f.Restarted(key, finished)
	clock.SetTime(finished.Add(time.Second))
	period, remaining, in := f.InBackoff(key, finished)
	if !in || period != 10*time.Second {
		t.Fatalf("after one restart: in=%v period=%v, want true 10s", in, period)
	}
	if remaining != time.Millisecond {
		t.Errorf("remaining = %v, want the 1ms floor for a back-off that ended by the wall clock", remaining)
	}
	clock.SetTime(finished.Add(10 * time.Second))
	if _, _, in := f.InBackoff(key, finished); in {
		t.Errorf("still in back-off 10s after the finish")
	}

	// Each further restart doubles the wait, up to 5 minutes.
	want := []time.Duration{20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 300 * time.Second, 300 * time.Second}
	at := finished
	for i, w := range want {
		at = at.Add(time.Minute)
		clock.SetTime(at)
		f.Restarted(key, at)
		period, _, in := f.InBackoff(key, at)
		if !in || period != w {
			t.Errorf("restart %d: in=%v period=%v, want true %v", i+2, in, period, w)
		}
	}

	// Another key is independent.
	if _, _, in := f.InBackoff("other", at); in {
		t.Errorf("an unrelated key is in back-off")
	}

	// A container that ran for longer than twice the maximum starts over at 10s.
	later := at.Add(11 * time.Minute)
	clock.SetTime(later)
	if _, _, in := f.InBackoff(key, later); in {
		t.Errorf("in back-off after a long run")
	}
	f.Restarted(key, later)
	if period, _, _ := f.InBackoff(key, later); period != 10*time.Second {
		t.Errorf("period after a long run = %v, want 10s", period)
	}
}

func TestNewFlowBackoff(t *testing.T) {
	f := newFlowBackoff()
	if f.b == nil {
		t.Fatal("no back-off")
	}
	if _, _, in := f.InBackoff("k", time.Now()); in {
		t.Errorf("fresh back-off says in back-off")
	}
}
