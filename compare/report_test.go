package compare

import (
	"bytes"
	"strings"
	"testing"
)

func TestResultFailedAndSummary(t *testing.T) {
	mk := func(statuses ...Status) *Result {
		r := &Result{}
		for i, s := range statuses {
			r.Scenarios = append(r.Scenarios, &ScenarioResult{Name: string(rune('a' + i)), Category: "c", Status: s})
		}
		r.Summarize()
		return r
	}
	for _, c := range []struct {
		statuses     []Status
		onlyMatching bool
		failed       bool
		score        string
	}{
		{[]Status{StatusMatch, StatusMatch}, false, false, "matching 2/2 scenarios"},
		{[]Status{StatusMatch, StatusDiffer}, false, true, "matching 1/2 scenarios"},
		{[]Status{StatusMatch, StatusKnownDiffer}, false, true, "matching 1/2 scenarios"},
		{[]Status{StatusMatch, StatusNowMatching}, false, false, "matching 2/2 scenarios"},
		{[]Status{StatusMatch, StatusError}, false, true, "matching 1/2 scenarios"},
		{[]Status{StatusMatch, StatusSkipped}, true, false, "matching 1/1 scenarios"},
		{[]Status{StatusDiffer, StatusSkipped}, true, true, "matching 0/1 scenarios"},
	} {
		r := mk(c.statuses...)
		r.OnlyMatching = c.onlyMatching
		if r.Failed() != c.failed || r.ScoreLine() != c.score {
			t.Errorf("%v only-matching=%v: failed=%v %q, want %v %q", c.statuses, c.onlyMatching, r.Failed(), r.ScoreLine(), c.failed, c.score)
		}
	}
	r := mk(StatusMatch, StatusNowMatching, StatusDiffer, StatusSkipped)
	var b bytes.Buffer
	PrintSummary(&b, r)
	for _, want := range []string{"matching 2/3 scenarios", "now matching, unmark them (1): c/b", "differ (1): c/c", "skipped (known) (1): c/d"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
}

func TestPrintNowMatching(t *testing.T) {
	r := &ScenarioResult{Name: "prestop", Category: "hooks", Known: &Known{Issue: 4, Why: "preStop hooks are not implemented"},
		A: &SideRecord{Pods: map[string]*PodRecord{}}, B: &SideRecord{Pods: map[string]*PodRecord{}}}
	r.Decide(CompareOptions{})
	var b bytes.Buffer
	PrintScenario(&b, r)
	if want := "=== hooks/prestop: NOW MATCHING, unmark it (known, issue #4: preStop hooks are not implemented)"; !strings.HasPrefix(b.String(), want) {
		t.Errorf("got %q, want prefix %q", b.String(), want)
	}
}
