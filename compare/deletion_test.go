package compare

import (
	"strings"
	"testing"
)

func gone(seconds float64, grace int64) *DeletionRecord {
	return &DeletionRecord{GracePeriodSeconds: grace, Gone: true, Seconds: seconds, Bucket: DeletionBucket(seconds, grace)}
}

func notGone(grace int64) *DeletionRecord {
	return &DeletionRecord{GracePeriodSeconds: grace, Bucket: "not gone"}
}

// Deletion times agree when one behaviour part (how long the containers took to stop) explains
// both, each within the kubelet's cadence envelope; on a run after the first, within the envelope
// of the range the reference node (B) showed over the runs.
func TestDeletionComparison(t *testing.T) {
	for _, c := range []struct {
		name       string
		a, b       *DeletionRecord
		refEarlier []float64
		match      bool
		wantInB    string
	}{
		{name: "grace 5, SIGTERM ignored: the grace period, then 0.6 s and 2.1 s of cadence (across the old bucket edge)",
			a: gone(5.6, 5), b: gone(7.1, 5), match: true},
		{name: "the same, sides swapped", a: gone(7.1, 5), b: gone(5.6, 5), match: true},
		{name: "grace 5: one node let the pod go at once, the other waited for the grace period",
			a: gone(0.4, 5), b: gone(5.2, 5), match: false},
		{name: "grace 30: the whole grace period against an exit on SIGTERM after 5 s",
			a: gone(30, 30), b: gone(5, 30), match: false},
		{name: "prompt exits on both, one node a relist later", a: gone(0.3, 30), b: gone(1.4, 30), match: true},
		{name: "prompt exits, at most two relist intervals apart", a: gone(0.1, 30), b: gone(2.6, 30), match: true},
		{name: "more than two relist intervals apart", a: gone(0.1, 30), b: gone(2.7, 30), match: false},
		{name: "grace-0 force deletions", a: gone(0.02, 0), b: gone(0.05, 0), match: true},
		{name: "gone against not gone", a: gone(0.4, 5), b: notGone(5), match: false, wantInB: "not gone"},
		{name: "neither gone", a: notGone(30), b: notGone(30), match: true},
		{name: "different grace periods in effect", a: gone(2.1, 2), b: gone(2.3, 30), match: false},
		{name: "only one side deleted the pod", a: gone(1, 5), b: nil, match: false},
		{name: "the kubelet's runs spread 2.9 to 5.3 s: 0.6 s is within the envelope of that range",
			a: gone(0.6, 30), b: gone(5.3, 30), refEarlier: []float64{2.9}, match: true},
		{name: "the kubelet's earlier run alone does not explain it: it is outside the envelope of 4.9 to 5.3 s",
			a: gone(0.6, 30), b: gone(5.3, 30), refEarlier: []float64{4.9}, match: false, wantInB: "4.9-5.3s in 2 runs"},
		{name: "the kubelet's spread widens the range above too",
			a: gone(12, 5), b: gone(7, 5), refEarlier: []float64{9.6, 8}, match: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var d differ
			d.deletion("pods/p/deletion", c.a, c.b, c.refEarlier)
			if got := len(d.out) == 0; got != c.match {
				t.Fatalf("match = %v, want %v (diffs %+v)", got, c.match, d.out)
			}
			if c.wantInB != "" && !strings.Contains(d.out[0].B, c.wantInB) {
				t.Errorf("B = %q, want it to contain %q", d.out[0].B, c.wantInB)
			}
		})
	}
}

func TestDeletionSummary(t *testing.T) {
	for _, c := range []struct {
		r    *DeletionRecord
		want string
	}{
		{gone(0.4, 5), "0.4s, 4.6s before the grace period (5s) ended"},
		{gone(7.1, 5), "7.1s, the grace period (5s) and 2.1s"},
		{gone(0.03, 0), "0.0s (grace 0s)"},
		{notGone(30), "not gone (grace 30s)"},
		{nil, Absent},
	} {
		if got := deletionSummary(c.r); got != c.want {
			t.Errorf("deletionSummary(%+v) = %q, want %q", c.r, got, c.want)
		}
	}
}

// A run after the first is decided with the reference node's deletion times of the earlier
// runs: the same two records differ on their own and match with the kubelet's spread.
func TestDecideWithHistoryOfEarlierAttempts(t *testing.T) {
	side := func(seconds float64) *SideRecord {
		return &SideRecord{Steps: []StepRecord{}, Pods: map[string]*PodRecord{
			"main":  {Timeline: []TimelineEntry{}, Events: []EventRecord{}, Deletion: gone(seconds, 30)},
			"other": {Timeline: []TimelineEntry{}, Events: []EventRecord{}},
		}}
	}
	// vk-cri took 0.4 s, then 0.6 s; the kubelet 3.0 s, then 4.5 s.
	first := &ScenarioResult{A: side(0.4), B: side(3.0)}
	first.Decide(CompareOptions{})
	if first.Status != StatusDiffer {
		t.Fatalf("first run: %s", first.Status)
	}
	second := &ScenarioResult{A: side(0.6), B: side(4.5)}
	second.Decide(CompareOptions{})
	if second.Status != StatusDiffer {
		t.Fatalf("second run without history: %s", second.Status)
	}
	earlier := []Attempt{attemptOf(first)}
	if got := earlier[0].DeletionsB; len(got) != 1 || got["main"] != 3.0 {
		t.Fatalf("attempt keeps B's deletions %v, want main=3", got)
	}
	second.DecideWith(CompareOptions{}, historyOf(earlier))
	if second.Status != StatusMatch {
		t.Errorf("second run with the kubelet's spread: %s %+v", second.Status, second.Diffs)
	}
}
