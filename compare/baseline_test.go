package compare

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// recordFake records the fake scenario on node, as `compare record` does, through JSON (the
// baseline file), with the given number of runs.
func recordFake(t *testing.T, exitCodes map[string]int32, node string, runs int) *Result {
	t.Helper()
	sc, err := Parse("fake/fake-run.yaml", []byte(fakeScenario))
	if err != nil {
		t.Fatal(err)
	}
	r := &Runner{Client: newFakeCluster(t, exitCodes), NodeB: node, RecordRuns: runs}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := r.CheckNodes(ctx); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	res := r.RunAll(ctx, []*Scenario{sc}, RunOptions{Report: &out}, "fake")
	t.Logf("record:\n%s", out.String())
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var back Result
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	return &back
}

func compareWithBaseline(t *testing.T, exitCodes map[string]int32, node string, baseline *Result) *Result {
	t.Helper()
	sc, err := Parse("fake/fake-run.yaml", []byte(fakeScenario))
	if err != nil {
		t.Fatal(err)
	}
	b, err := BaselineOf(baseline)
	if err != nil {
		t.Fatal(err)
	}
	// The recorded node is not in this cluster: only node A runs.
	r := &Runner{Client: newFakeCluster(t, exitCodes), NodeA: node, NodeB: baseline.NodeB, Baseline: b}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := r.CheckNodes(ctx); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	res := r.RunAll(ctx, []*Scenario{sc}, RunOptions{Report: &out, Retries: 1}, "fake")
	t.Logf("report:\n%s", out.String())
	return res
}

// A baseline recorded on one node, compared with a node that behaves the same, matches as the
// live comparison of the two nodes does; with a node that behaves otherwise it differs in the
// same places.
func TestBaselineGivesTheLiveVerdicts(t *testing.T) {
	base := recordFake(t, map[string]int32{"kubelet": 0}, "kubelet", 2)
	sc := base.Scenarios[0]
	if sc.Status != StatusRecorded || sc.A != nil || sc.B == nil || sc.B.Error != "" || len(sc.EarlierAttempts) != 1 {
		t.Fatalf("recorded %s, A %v, B %+v, earlier %d", sc.Status, sc.A, sc.B, len(sc.EarlierAttempts))
	}
	if base.ScoreLine() != "recorded 1/1 scenarios" || base.Failed() {
		t.Errorf("record summary %q failed=%v", base.ScoreLine(), base.Failed())
	}
	if _, ok := sc.EarlierAttempts[0].DeletionsB["main"]; !ok {
		t.Errorf("the earlier run's deletion time is not kept: %+v", sc.EarlierAttempts[0])
	}

	same := compareWithBaseline(t, map[string]int32{"vk": 0}, "vk", base)
	live := runFake(t, map[string]int32{"vk": 0, "kubelet": 0}, "vk", "kubelet")
	if got, want := same.Scenarios[0].Status, live.Scenarios[0].Status; got != StatusMatch || got != want {
		t.Errorf("against the baseline %s (diffs %+v), live %s", got, same.Scenarios[0].Diffs, want)
	}
	if same.NodeB != "kubelet" {
		t.Errorf("node B is %q, want the baseline's node", same.NodeB)
	}

	other := compareWithBaseline(t, map[string]int32{"vk": 3}, "vk", base)
	liveOther := runFake(t, map[string]int32{"vk": 3, "kubelet": 0}, "vk", "kubelet")
	if other.Scenarios[0].Status != StatusDiffer || liveOther.Scenarios[0].Status != StatusDiffer {
		t.Fatalf("against the baseline %s, live %s", other.Scenarios[0].Status, liveOther.Scenarios[0].Status)
	}
	paths := func(r *Result) map[string]bool {
		m := map[string]bool{}
		for _, d := range r.Scenarios[0].Diffs {
			m[d.Path] = true
		}
		return m
	}
	bp, lp := paths(other), paths(liveOther)
	for p := range lp {
		if !bp[p] {
			t.Errorf("the live comparison differs at %s, the baseline's does not", p)
		}
	}
	for p := range bp {
		if !lp[p] {
			t.Errorf("the baseline's comparison differs at %s, the live one does not", p)
		}
	}
}

func TestBaselineRefusesAComparisonResultAndMissingScenarios(t *testing.T) {
	if _, err := BaselineOf(&Result{Scenarios: []*ScenarioResult{{Name: "x", Category: "c", Status: StatusMatch}}}); err == nil {
		t.Errorf("a comparison's result was taken as a baseline")
	}
	stale := recordFake(t, map[string]int32{"kubelet": 0}, "kubelet", 1)
	stale.Scenarios[0].Digest = "sha256:0000"
	res := compareWithBaseline(t, map[string]int32{"vk": 0}, "vk", stale)
	if sc := res.Scenarios[0]; sc.Status != StatusError || !strings.Contains(sc.A.Error, "record it again") {
		t.Errorf("a baseline of another version of the scenario: %s %+v", sc.Status, sc.A)
	}
	empty := &Result{NodeB: "kubelet"}
	res = compareWithBaseline(t, map[string]int32{"vk": 0}, "vk", empty)
	if sc := res.Scenarios[0]; sc.Status != StatusError || sc.A.Error != "not in the baseline" {
		t.Errorf("a scenario missing from the baseline: %s %+v", sc.Status, sc.A)
	}
}
