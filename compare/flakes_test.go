package compare

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/vk-cri/vk-cri/internal/golden"
)

func loadFlakeRuns(t *testing.T) []*Result {
	t.Helper()
	files, err := filepath.Glob("testdata/flakes/run-*.json")
	if err != nil || len(files) != 3 {
		t.Fatalf("flake fixtures: %v %v", files, err)
	}
	runs, err := ReadResults(files)
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

// Three saved runs (testdata/flakes/run-*.json, written by `vk-cri compare --out`): the table
// lists the scenarios that differed at least once, with the paths and the node whose own value
// moved between runs; testdata/flakes/table.md is the expected Markdown.
func TestFlakeTableFromSavedRuns(t *testing.T) {
	tab := BuildFlakeTable(loadFlakeRuns(t), nil)
	if tab.Runs != 3 || tab.NodeA != "vk-cmpx" || tab.NodeB != "ref" {
		t.Errorf("runs %d, nodes %s %s", tab.Runs, tab.NodeA, tab.NodeB)
	}
	// env-literal matched every time; hooks/known-one was skipped (not counted).
	if tab.Steady != 1 {
		t.Errorf("steady = %d, want 1", tab.Steady)
	}
	type want struct {
		differed int
		paths    map[string][3]any // path: runs, movedA, movedB
	}
	wants := map[string]want{
		// The kubelet's deletion took 7.0-8.5 s, vk-cri's 5.6-5.7 s: ref raced.
		"lifecycle/status-shape": {2, map[string][3]any{
			"pods/guaranteed/deletion": {2, false, true},
			"pods/with-token/deletion": {1, false, true}}},
		// vk-cri's container exited 2 in one run, 0 in the others, like the kubelet's.
		"probes/readiness-httpget": {1, map[string][3]any{
			"pods/main/timeline":                        {1, true, false},
			"pods/main/timeline[*].containers[c].state": {1, true, false}}},
		// The same difference in every run: neither node raced.
		"lifecycle/logs-steady": {3, map[string][3]any{
			"pods/main/logs[c].current": {3, false, false}}},
		// vk-cri's side could not run once.
		"volumes/configmap-volume": {1, map[string][3]any{
			"error":     {1, true, false},
			"pods/main": {1, true, false},
			"steps[*]":  {1, true, false}}},
	}
	if len(tab.Rows) != len(wants) {
		t.Errorf("%d rows, want %d: %+v", len(tab.Rows), len(wants), tab.Rows)
	}
	for _, r := range tab.Rows {
		w, ok := wants[r.Scenario]
		if !ok {
			t.Errorf("unexpected row %+v", r)
			continue
		}
		if r.Ran != 3 || r.Differed != w.differed {
			t.Errorf("%s: differed %d/%d, want %d/3", r.Scenario, r.Differed, r.Ran, w.differed)
		}
		if len(r.Paths) != len(w.paths) {
			t.Errorf("%s: paths %+v, want %v", r.Scenario, r.Paths, w.paths)
		}
		for _, p := range r.Paths {
			wp, ok := w.paths[p.Path]
			if !ok {
				t.Errorf("%s: unexpected path %+v", r.Scenario, p)
				continue
			}
			if got := [3]any{p.Runs, p.MovedA, p.MovedB}; got != wp {
				t.Errorf("%s %s: runs, movedA, movedB = %v, want %v", r.Scenario, p.Path, got, wp)
			}
		}
	}
	var b bytes.Buffer
	tab.WriteMarkdown(&b)
	golden.Check(t, "testdata/flakes/table.md", b.Bytes())
}

// The saved runs are what the comparison makes of their records (so that the fixtures stay
// honest when the comparison changes).
func TestFlakeFixturesAreDecided(t *testing.T) {
	for i, r := range loadFlakeRuns(t) {
		for _, sc := range r.Scenarios {
			if sc.Status == StatusSkipped {
				continue
			}
			again := &ScenarioResult{A: sc.A, B: sc.B}
			again.Decide(CompareOptions{})
			if again.Status != sc.Status || len(again.Diffs) != len(sc.Diffs) {
				t.Errorf("run %d %s: saved %s with %d diffs, decided %s with %d", i+1, sc.Name, sc.Status, len(sc.Diffs), again.Status, len(again.Diffs))
			}
		}
	}
}

// A scenario's ignore patterns apply to the runs against each other too.
func TestFlakeTableAppliesTheScenariosIgnorePatterns(t *testing.T) {
	opts := func(id string) CompareOptions {
		if id == "probes/readiness-httpget" {
			return CompareOptions{Ignore: []string{"pods/main/timeline[*].containers[c].state"}}
		}
		return CompareOptions{}
	}
	for _, r := range BuildFlakeTable(loadFlakeRuns(t), opts).Rows {
		if r.Scenario != "probes/readiness-httpget" {
			continue
		}
		for _, p := range r.Paths {
			if p.MovedA || p.MovedB {
				t.Errorf("%s moved although the field that moved is ignored: %+v", r.Scenario, p)
			}
		}
	}
}

func TestPathStemsAndRelations(t *testing.T) {
	for in, want := range map[string]string{
		"pods/main/timeline[3].containers[web].state":          "pods/main/timeline[*].containers[web].state",
		"pods/main/timeline[1,2].conditions[Ready]":            "pods/main/timeline[*].conditions[Ready]",
		"steps[12].exec.stdout":                                "steps[*].exec.stdout",
		"pods/main/events[Warning BackOff spec.containers{c}]": "pods/main/events[Warning BackOff spec.containers{c}]",
	} {
		if got := pathStem(in); got != want {
			t.Errorf("pathStem(%q) = %q, want %q", in, got, want)
		}
	}
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"pods/main/timeline", "pods/main/timeline[*].phase", true},
		{"pods/main/timeline[*].phase", "pods/main/timeline", true},
		{"pods/main", "pods/main/deletion", true},
		{"pods/main", "pods/mainx/deletion", false},
		{"steps[*]", "steps[*].exec", true},
		{"pods/a/logs[c].current", "pods/a/logs[c].previous", false},
	} {
		if got := pathsRelated(c.a, c.b); got != c.want {
			t.Errorf("pathsRelated(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
