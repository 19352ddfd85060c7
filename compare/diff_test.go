package compare

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/vk-cri/vk-cri/internal/golden"
)

type diffCase struct {
	Name    string         `json:"name"`
	Known   *Known         `json:"known"`
	Compare CompareOptions `json:"compare"`
	A       *SideRecord    `json:"a"`
	B       *SideRecord    `json:"b"`
}

func loadDiffCase(t *testing.T, path string) diffCase {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var c diffCase
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return c
}

// Each testdata/diff/*.yaml holds two records; the golden file is the printed outcome.
func TestDiffGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/diff/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no diff fixtures: %v", err)
	}
	wantStatus := map[string]Status{
		"identical":        StatusMatch,
		"timeline-skipped": StatusMatch,
		"timeline-final":   StatusKnownDiffer,
		"timeline-order":   StatusDiffer,
		"events":           StatusDiffer,
		"events-counts":    StatusDiffer,
		"logs-exec":        StatusDiffer,
		"deletion":         StatusDiffer,
		"ignore":           StatusMatch,
		"steps":            StatusDiffer,

		"ready-to-start-race":    StatusMatch,
		"ready-to-start-final":   StatusDiffer,
		"durations":              StatusDiffer,
		"durations-skipped-exit": StatusDiffer,
	}
	// The duration rule takes B as the reference: swapping the sides changes what it finds.
	asymmetric := map[string]bool{"durations": true, "durations-skipped-exit": true}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			c := loadDiffCase(t, f)
			r := &ScenarioResult{Name: c.Name, Category: "test", Known: c.Known, A: c.A, B: c.B}
			r.Decide(c.Compare)
			if want, ok := wantStatus[c.Name]; !ok {
				t.Errorf("no expected status for %s", c.Name)
			} else if r.Status != want {
				t.Errorf("status = %s, want %s", r.Status, want)
			}
			// Swapping the sides swaps - and + but finds the same differences.
			swapped := DiffSides(c.B, c.A, c.Compare)
			if len(swapped) != len(r.Diffs) && !asymmetric[c.Name] {
				t.Errorf("%d diffs, %d with the sides swapped", len(r.Diffs), len(swapped))
			}
			var b bytes.Buffer
			PrintScenario(&b, r)
			golden.Check(t, strings.TrimSuffix(f, ".yaml")+".golden", b.Bytes())
		})
	}
}

func TestDeletionBucket(t *testing.T) {
	for _, c := range []struct {
		s     float64
		grace int64
		want  string
	}{
		{0.2, 30, "<1s"},
		{1, 30, "1-3s"},
		{2.99, 0, "1-3s"},
		{3, 0, "3-10s"},
		{3, 5, "grace±2s"},
		{7, 5, "grace±2s"},
		{7.1, 5, "3-10s"},
		{28.5, 30, "grace±2s"},
		{25, 30, "10-30s"},
		{45, 30, ">30s"},
		{1.5, 2, "1-3s"}, // grace periods under 3 s have no bucket of their own
	} {
		if got := DeletionBucket(c.s, c.grace); got != c.want {
			t.Errorf("DeletionBucket(%v, %d) = %q, want %q", c.s, c.grace, got, c.want)
		}
	}
}

func TestIgnorer(t *testing.T) {
	ig := NewIgnorer([]string{"pods/*/logs[c]", "steps[2]", "pods/main/timeline[*].containers[web].restartCount"})
	for path, want := range map[string]bool{
		"pods/main/logs[c].current":         true,
		"pods/other/logs[c].previous.error": true,
		"pods/main/logs[cc].current":        false,
		"steps[2]":                          true,
		"steps[2].exec.stdout":              true,
		"steps[20]":                         false,
		"pods/main/timeline[3].containers[web].restartCount": true,
		"pods/main/timeline[3].containers[web].state":        false,
	} {
		if got := ig.Ignored(path); got != want {
			t.Errorf("Ignored(%q) = %v, want %v", path, got, want)
		}
	}
}

func TestLineDiff(t *testing.T) {
	got := strings.Join(lineDiff("a\nb\nc\nd\ne\nf\ng\n", "a\nb\nc\nD\ne\nf\ng\nh\n"), "|")
	want := " ...| b| c|-d|+D| e| f| g|+h"
	if got != want {
		t.Errorf("lineDiff = %q, want %q", got, want)
	}
}

// The JSON result keeps both records and the diffs, and reads back.
func TestResultJSON(t *testing.T) {
	c := loadDiffCase(t, "testdata/diff/timeline-final.yaml")
	r := &ScenarioResult{Name: c.Name, Category: "test", Known: c.Known, A: c.A, B: c.B}
	r.Decide(c.Compare)
	res := &Result{NodeA: "vk-cmpa", NodeB: "ref", Scenarios: []*ScenarioResult{r}}
	res.Summarize()
	path := filepath.Join(t.TempDir(), "out.json")
	if err := res.WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var back Result
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	got := back.Scenarios[0]
	if got.Status != StatusKnownDiffer || len(got.Diffs) != len(r.Diffs) || len(got.A.Pods["main"].Timeline) != 4 {
		t.Errorf("read back %+v", got)
	}
	if back.Summary.Ran != 1 || back.Summary.Matching != 0 || len(back.Summary.KnownDiffer) != 1 {
		t.Errorf("summary %+v", back.Summary)
	}
}
