package compare

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// Status is the outcome of one scenario.
type Status string

// The statuses.
const (
	// StatusMatch: both sides did the same.
	StatusMatch Status = "match"
	// StatusDiffer: the sides differ and the scenario is not marked known.
	StatusDiffer Status = "differ"
	// StatusKnownDiffer: the sides differ, as the scenario's known mark says.
	StatusKnownDiffer Status = "known-differ"
	// StatusNowMatching: marked known, but both sides did the same: unmark it.
	StatusNowMatching Status = "now-matching"
	// StatusError: the scenario could not be run on a side.
	StatusError Status = "error"
	// StatusSkipped: marked known and not run (--only-matching).
	StatusSkipped Status = "skipped"
)

// ScenarioResult is everything about one scenario.
type ScenarioResult struct {
	Name        string `json:"name"`
	Category    string `json:"category"`
	File        string `json:"file"`
	Description string `json:"description"`
	Known       *Known `json:"known,omitempty"`
	// Digest is the scenario file's SHA-256 (Scenario.Digest).
	Digest  string  `json:"digest,omitempty"`
	Status  Status  `json:"status"`
	Seconds float64 `json:"seconds"`
	// Diffs between A and B; empty when they match.
	Diffs []Diff      `json:"diffs"`
	A     *SideRecord `json:"a,omitempty"`
	B     *SideRecord `json:"b,omitempty"`
	// EarlierAttempts are the runs before this one that differed or failed (--retries).
	EarlierAttempts []Attempt `json:"earlierAttempts,omitempty"`
}

// Attempt is the outcome of an earlier run of a scenario that was run again.
type Attempt struct {
	Status  Status  `json:"status"`
	Seconds float64 `json:"seconds"`
	Diffs   []Diff  `json:"diffs"`
	ErrorA  string  `json:"errorA,omitempty"`
	ErrorB  string  `json:"errorB,omitempty"`
	// DeletionsA and DeletionsB are each node's deletion times (seconds) of the pods gone from
	// the API in that run; node B's widen the comparison of the next runs (RunHistory).
	DeletionsA map[string]float64 `json:"deletionsA,omitempty"`
	DeletionsB map[string]float64 `json:"deletionsB,omitempty"`
}

// attemptOf keeps what a later run of the scenario needs of a run that is run again.
func attemptOf(r *ScenarioResult) Attempt {
	return Attempt{Status: r.Status, Seconds: r.Seconds, Diffs: r.Diffs, ErrorA: r.A.errorText(), ErrorB: r.B.errorText(),
		DeletionsA: goneDeletions(r.A), DeletionsB: goneDeletions(r.B)}
}

func (s *SideRecord) errorText() string {
	if s == nil {
		return ""
	}
	return s.Error
}

// Decide sets the result's Diffs and Status from its two records.
func (r *ScenarioResult) Decide(opts CompareOptions) { r.DecideWith(opts, RunHistory{}) }

// DecideWith sets the result's Diffs and Status from its two records and what earlier runs of
// the scenario showed.
func (r *ScenarioResult) DecideWith(opts CompareOptions, hist RunHistory) {
	r.Diffs = DiffSidesWith(r.A, r.B, opts, hist)
	if r.Diffs == nil {
		r.Diffs = []Diff{}
	}
	switch {
	case r.A.Error != "" || r.B.Error != "":
		r.Status = StatusError
	case len(r.Diffs) == 0 && r.Known != nil:
		r.Status = StatusNowMatching
	case len(r.Diffs) == 0:
		r.Status = StatusMatch
	case r.Known != nil:
		r.Status = StatusKnownDiffer
	default:
		r.Status = StatusDiffer
	}
}

// Result is a whole compare run, as written to --out.
type Result struct {
	NodeA        string            `json:"nodeA"`
	NodeB        string            `json:"nodeB"`
	ScenarioDir  string            `json:"scenarioDir"`
	Run          string            `json:"run,omitempty"`
	OnlyMatching bool              `json:"onlyMatching"`
	Started      time.Time         `json:"started"`
	Seconds      float64           `json:"seconds"`
	Summary      Summary           `json:"summary"`
	Scenarios    []*ScenarioResult `json:"scenarios"`
}

// Summary counts the outcomes.
type Summary struct {
	// Ran is the number of scenarios run; Matching how many of them matched (including known
	// ones that now match).
	Ran      int `json:"ran"`
	Matching int `json:"matching"`
	// Scenario IDs (category/name) by outcome.
	Differ      []string `json:"differ"`
	KnownDiffer []string `json:"knownDiffer"`
	NowMatching []string `json:"nowMatching"`
	Errors      []string `json:"errors"`
	Skipped     []string `json:"skipped"`
	// MatchedOnRetry lists the scenarios that matched only after differing or failing first.
	MatchedOnRetry []string `json:"matchedOnRetry"`
	// Recorded counts the scenarios recorded for a baseline (compare record).
	Recorded int `json:"recorded,omitempty"`
}

// Summarize fills in the summary from the scenario results.
func (r *Result) Summarize() {
	s := Summary{Differ: []string{}, KnownDiffer: []string{}, NowMatching: []string{}, Errors: []string{}, Skipped: []string{}, MatchedOnRetry: []string{}}
	for _, sc := range r.Scenarios {
		id := sc.Category + "/" + sc.Name
		if sc.Status != StatusSkipped {
			s.Ran++
		}
		if len(sc.EarlierAttempts) > 0 && (sc.Status == StatusMatch || sc.Status == StatusNowMatching) {
			s.MatchedOnRetry = append(s.MatchedOnRetry, id)
		}
		switch sc.Status {
		case StatusMatch:
			s.Matching++
		case StatusNowMatching:
			s.Matching++
			s.NowMatching = append(s.NowMatching, id)
		case StatusDiffer:
			s.Differ = append(s.Differ, id)
		case StatusKnownDiffer:
			s.KnownDiffer = append(s.KnownDiffer, id)
		case StatusError:
			s.Errors = append(s.Errors, id)
		case StatusSkipped:
			s.Skipped = append(s.Skipped, id)
		case StatusRecorded:
			s.Recorded++
		}
	}
	r.Summary = s
}

// Failed reports whether the run should exit non-zero: a scenario differs or could not be run.
// Known scenarios that differ count, unless the run was --only-matching (they were not run).
func (r *Result) Failed() bool {
	s := r.Summary
	if len(s.Differ) > 0 || len(s.Errors) > 0 {
		return true
	}
	return !r.OnlyMatching && len(s.KnownDiffer) > 0
}

// ScoreLine is the summary line: "matching N/M scenarios".
func (r *Result) ScoreLine() string {
	if r.Summary.Recorded > 0 {
		return fmt.Sprintf("recorded %d/%d scenarios", r.Summary.Recorded, r.Summary.Ran)
	}
	return fmt.Sprintf("matching %d/%d scenarios", r.Summary.Matching, r.Summary.Ran)
}

// WriteJSON writes the result to a file.
func (r *Result) WriteJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// PrintHeader prints what is compared with what.
func PrintHeader(w io.Writer, nodeA, nodeB string) {
	fmt.Fprintf(w, "comparing A = node %s (lines -) with B = node %s (lines +)\n", nodeA, nodeB)
}

// PrintScenario prints one scenario's outcome and its diffs, after those of earlier attempts.
func PrintScenario(w io.Writer, r *ScenarioResult) {
	id := r.Category + "/" + r.Name
	if r.Status == StatusRecorded {
		fmt.Fprintf(w, "=== %s: recorded (%.0fs, %d runs)\n", id, r.Seconds, len(r.EarlierAttempts)+1)
		return
	}
	for i, a := range r.EarlierAttempts {
		fmt.Fprintf(w, "=== %s: attempt %d: %s (%.0fs), run again\n", id, i+1, a.Status, a.Seconds)
		if a.ErrorA != "" {
			fmt.Fprintf(w, "    A: %s\n", a.ErrorA)
		}
		if a.ErrorB != "" {
			fmt.Fprintf(w, "    B: %s\n", a.ErrorB)
		}
		PrintDiffs(w, a.Diffs, "    ")
	}
	known := ""
	if r.Known != nil {
		known = fmt.Sprintf("known, issue #%d: %s", r.Known.Issue, r.Known.Why)
	}
	switch r.Status {
	case StatusMatch:
		fmt.Fprintf(w, "=== %s: match (%.0fs)\n", id, r.Seconds)
	case StatusNowMatching:
		fmt.Fprintf(w, "=== %s: NOW MATCHING, unmark it (%s) (%.0fs)\n", id, known, r.Seconds)
	case StatusSkipped:
		fmt.Fprintf(w, "=== %s: skipped (%s)\n", id, known)
	case StatusKnownDiffer:
		fmt.Fprintf(w, "=== %s: differs, as known (%s) (%.0fs)\n", id, known, r.Seconds)
	case StatusDiffer:
		fmt.Fprintf(w, "=== %s: DIFFERS (%.0fs)\n", id, r.Seconds)
	case StatusError:
		fmt.Fprintf(w, "=== %s: ERROR (%.0fs)\n", id, r.Seconds)
		if r.A != nil && r.A.Error != "" {
			fmt.Fprintf(w, "    A: %s\n", r.A.Error)
		}
		if r.B != nil && r.B.Error != "" {
			fmt.Fprintf(w, "    B: %s\n", r.B.Error)
		}
		return
	}
	PrintDiffs(w, r.Diffs, "    ")
}

// PrintDiffs prints diffs as "-" (A) and "+" (B) lines.
func PrintDiffs(w io.Writer, diffs []Diff, indent string) {
	for _, d := range diffs {
		if d.Note != "" {
			fmt.Fprintf(w, "%s%s: %s\n", indent, d.Path, d.Note)
			continue
		}
		pb := d.PathB
		if pb == "" {
			pb = d.Path
		}
		fmt.Fprintf(w, "%s- %s: %s\n", indent, d.Path, oneLine(d.A))
		fmt.Fprintf(w, "%s+ %s: %s\n", indent, pb, oneLine(d.B))
		for _, l := range d.Lines {
			fmt.Fprintf(w, "%s    %s\n", indent, l)
		}
	}
}

func oneLine(s string) string {
	if strings.ContainsAny(s, "\n\r") {
		return strconv.Quote(s)
	}
	return s
}

// PrintSummary prints the score line and the lists worth acting on.
func PrintSummary(w io.Writer, r *Result) {
	s := r.Summary
	fmt.Fprintln(w)
	fmt.Fprintln(w, r.ScoreLine())
	list := func(what string, ids []string) {
		if len(ids) > 0 {
			fmt.Fprintf(w, "  %s (%d): %s\n", what, len(ids), strings.Join(ids, ", "))
		}
	}
	list("differ", s.Differ)
	list("differ, known", s.KnownDiffer)
	list("now matching, unmark them", s.NowMatching)
	list("could not run", s.Errors)
	list("matched only when run again", s.MatchedOnRetry)
	list("skipped (known)", s.Skipped)
}
