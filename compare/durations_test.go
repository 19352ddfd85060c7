package compare

import (
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

func secs(s float64) *float64 { return &s }

func TestStampDurations(t *testing.T) {
	tl := []TimelineEntry{{At: 0.1}, {At: 0.35}, {At: 2}}
	cases := []struct {
		name string
		end  float64
		open bool
		want string
	}{
		{"a pod gone from the API", 2.5, false, "0.25 1.65 0.5"},
		{"a pod still there when the timelines stopped", 4, true, "0.25 1.65 2+"},
		{"the watch saw the removal before the last state's time (clock rounding)", 1.999, false, "0.25 1.65 0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := stampDurations(tl, tc.end, tc.open)
			var parts []string
			for _, e := range got {
				s := fmt.Sprint(*e.Seconds)
				if e.Open {
					s += "+"
				}
				parts = append(parts, s)
			}
			if g := strings.Join(parts, " "); g != tc.want {
				t.Errorf("durations %q, want %q", g, tc.want)
			}
			if tl[0].Seconds != nil {
				t.Error("the input timeline was changed")
			}
		})
	}
}

func TestDurationsDiffer(t *testing.T) {
	cases := []struct {
		name           string
		aS, aP, bS, bP float64
		want           bool
	}{
		// Measured on vk-cri before issue 29's fix against the kubelet (init and regular
		// containers exiting at once, first back-off): the exit shown for the back-off, then
		// CrashLoopBackOff for the moment of the restart.
		{"CrashLoopBackOff momentary, the exit held", 0.13, 9.7, 9.59, 1.06, true},
		{"CrashLoopBackOff momentary, the exit held (init)", 0.2, 12.45, 12.12, 1.0, true},
		{"CrashLoopBackOff never shown, the exit held", 0, 9.7, 9.59, 1.06, true},
		{"CrashLoopBackOff shown for most of the back-off", 11.66, 0.92, 9.59, 1.06, false},
		{"shown long enough", 0.75, 9.7, 9.59, 1.06, false},
		// The kubelet showed the state only for a relist or two: its cadence, not the pod.
		{"not lasting on B", 0.1, 5, 2.5, 0.3, false},
		// lifecycle/crashloop-exit-at-once against a loaded ref: the kubelet showed the exit for
		// the back-off and CrashLoopBackOff at its end (1.13 s), vk-cri CrashLoopBackOff for the
		// back-off; the last instance's running state, ended by the next relist, lasted 2.59 s on
		// the kubelet and 0.69 s on vk-cri. Cadence, not a state held.
		{"a cadence state over the envelope on a loaded node", 0.69, 12.51, 2.59, 1.13, false},
		// A went through both states faster than B (a loaded reference node creating the
		// container): not held, not a difference.
		{"A faster through the stage", 0.45, 0.5, 5.38, 0.4, false},
		{"A held the state before only a little longer", 0.1, 3.5, 9, 1.1, false},
		{"A longer than B", 30, 1, 2.6, 1, false},
	}
	for _, tc := range cases {
		if got := durationsDiffer(tc.aS, tc.aP, tc.bS, tc.bP); got != tc.want {
			t.Errorf("%s: durationsDiffer(%v, %v, %v, %v) = %v, want %v", tc.name, tc.aS, tc.aP, tc.bS, tc.bP, got, tc.want)
		}
	}
}

func TestCollapseVisibleSumsEqualStates(t *testing.T) {
	tl := []TimelineEntry{
		{At: 0, Seconds: secs(0.5)},
		{At: 0.5, Seconds: secs(0.25)},
		{At: 0.75, Seconds: secs(2), Open: true},
	}
	got := collapseVisible(tl, []string{"x", "x", "y"})
	if len(got) != 2 || got[0].seconds != 0.75 || got[0].index != 0 || got[0].open || !got[1].open || got[1].index != 2 {
		t.Errorf("collapsed %+v", got)
	}
	old := collapseVisible([]TimelineEntry{{At: 0}, {At: 1}}, []string{"x", "x"})
	if len(old) != 1 || old[0].known {
		t.Errorf("a record without durations: %+v", old)
	}
}

// The tracker's timelines get their durations from the watch's own times: the last state of a
// pod removed from the API ends at the removal, that of a pod still there is open.
func TestTrackerTimelineDurations(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pod := func(name string, phase v1.PodPhase) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: v1.PodStatus{Phase: phase}}
	}
	tr := newPodTracker([]string{"gone", "stays"})
	tr.setStart(t0)
	tr.observe(watch.Event{Type: watch.Added, Object: pod("gone", v1.PodPending)}, t0.Add(100*time.Millisecond))
	tr.observe(watch.Event{Type: watch.Modified, Object: pod("gone", v1.PodRunning)}, t0.Add(500*time.Millisecond))
	// A write that normalises to the same state is not a new state.
	tr.observe(watch.Event{Type: watch.Modified, Object: pod("gone", v1.PodRunning)}, t0.Add(time.Second))
	tr.observe(watch.Event{Type: watch.Deleted, Object: pod("gone", v1.PodRunning)}, t0.Add(2*time.Second))
	tr.observe(watch.Event{Type: watch.Added, Object: pod("stays", v1.PodPending)}, t0.Add(100*time.Millisecond))
	tr.freeze()

	got := tr.timelineWithDurations("gone")
	if len(got) != 2 || *got[0].Seconds != 0.4 || *got[1].Seconds != 1.5 || got[0].Open || got[1].Open {
		t.Errorf("gone: %+v", got)
	}
	stays := tr.timelineWithDurations("stays")
	if len(stays) != 1 || !stays[0].Open || *stays[0].Seconds <= 0 {
		t.Errorf("stays: %+v", stays)
	}
}
