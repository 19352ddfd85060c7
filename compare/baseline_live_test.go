package compare

import (
	"os"
	"testing"
)

// The shipped baseline gives the verdicts of a live comparison: hack/compare-ci.sh runs a part of
// the corpus against the baseline right after the live run against the reference node and points
// VKCRI_LIVE_RESULT and VKCRI_BASELINE_RESULT at the two results; every scenario of the baseline
// run must have the live run's verdict (a match after a retry counts as a match).
func TestBaselineVerdictsAgreeWithTheLiveRun(t *testing.T) {
	livePath, basePath := os.Getenv("VKCRI_LIVE_RESULT"), os.Getenv("VKCRI_BASELINE_RESULT")
	if livePath == "" || basePath == "" {
		t.Skip("VKCRI_LIVE_RESULT and VKCRI_BASELINE_RESULT name the results of a live and a baseline run (hack/compare-ci.sh)")
	}
	rs, err := ReadResults([]string{livePath, basePath})
	if err != nil {
		t.Fatal(err)
	}
	live := map[string]Status{}
	for _, sc := range rs[0].Scenarios {
		live[sc.Category+"/"+sc.Name] = verdict(sc.Status)
	}
	if len(rs[1].Scenarios) == 0 {
		t.Fatal("the baseline run has no scenarios")
	}
	for _, sc := range rs[1].Scenarios {
		id := sc.Category + "/" + sc.Name
		want, ok := live[id]
		switch {
		case !ok:
			t.Errorf("%s: against the baseline %s, not in the live run", id, sc.Status)
		case verdict(sc.Status) != want:
			t.Errorf("%s: against the baseline %s, live %s", id, sc.Status, want)
		}
	}
	t.Logf("%d scenarios: the baseline's verdicts are the live run's", len(rs[1].Scenarios))
}

// verdict folds the statuses that mean the same for a run's outcome.
func verdict(s Status) Status {
	if s == StatusNowMatching {
		return StatusMatch
	}
	return s
}
