package compare

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"sort"
	"strings"
)

// Flake measurement
//
// hack/compare-flakes.sh runs the corpus several times (each run a Result, --retries 0) and
// `vk-cri compare flakes` builds from their JSON files a table of the scenarios that differed
// in at least one run: how many runs, which diff paths (indexes left out, so that the same
// field of another timeline entry counts as the same path), and per path which node's value
// moved between runs, "the node that raced": a node whose own records of the scenario differ
// from one run to another at that path, under the same comparison as A against B; a deletion
// time, which that comparison allows to move by DeletionEnvelope, moved when the pod was gone
// in some runs and not in others or its times span half a relist period or more. A path at
// which neither node moved differs the same way in every run: a steady difference, not a race.

// FlakeTable is the outcome of several runs of the same corpus.
type FlakeTable struct {
	Runs         int
	NodeA, NodeB string
	// Rows are the scenarios that differed (or could not run) in at least one run, by ID.
	Rows []FlakeRow
	// Steady counts the scenarios that ran and matched in every run.
	Steady int
}

// FlakeRow is one scenario that differed at least once.
type FlakeRow struct {
	Scenario string
	// Ran is the number of runs that ran it (not skipped); Differed how many of them differed
	// or could not run (a run that matched only on retry counts as differing).
	Ran, Differed int
	Paths         []FlakePath
}

// FlakePath is one diff path of a scenario over the runs.
type FlakePath struct {
	// Path is the diff path with its indexes replaced by "*".
	Path string
	// Runs is how many runs differed at it.
	Runs int
	// MovedA and MovedB say whether each node's own value moved between runs.
	MovedA, MovedB bool
}

// ReadResults reads the JSON results written by `vk-cri compare --out`.
func ReadResults(paths []string) ([]*Result, error) {
	var out []*Result
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var r Result
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		out = append(out, &r)
	}
	return out, nil
}

// BuildFlakeTable builds the table from the runs' results. compareOptions gives a scenario's
// comparison options by ID (its ignore patterns apply to the runs against each other too); nil
// means the defaults.
func BuildFlakeTable(results []*Result, compareOptions func(id string) CompareOptions) *FlakeTable {
	t := &FlakeTable{Runs: len(results)}
	if len(results) > 0 {
		t.NodeA, t.NodeB = results[0].NodeA, results[0].NodeB
	}
	runs := map[string][]*ScenarioResult{}
	var ids []string
	for _, r := range results {
		for _, sc := range r.Scenarios {
			if sc.Status == StatusSkipped {
				continue
			}
			id := sc.Category + "/" + sc.Name
			if _, ok := runs[id]; !ok {
				ids = append(ids, id)
			}
			runs[id] = append(runs[id], sc)
		}
	}
	sort.Strings(ids)
	for _, id := range ids {
		opts := CompareOptions{}
		if compareOptions != nil {
			opts = compareOptions(id)
		}
		row := flakeRow(id, runs[id], opts)
		if row.Differed == 0 {
			t.Steady++
			continue
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func flakeRow(id string, runs []*ScenarioResult, opts CompareOptions) FlakeRow {
	row := FlakeRow{Scenario: id, Ran: len(runs)}
	counts := map[string]int{}
	for _, sc := range runs {
		seen := map[string]bool{}
		note := func(diffs []Diff) {
			for _, d := range diffs {
				seen[pathStem(d.Path)] = true
			}
		}
		note(sc.Diffs)
		for _, a := range sc.EarlierAttempts {
			note(a.Diffs)
			if a.ErrorA != "" || a.ErrorB != "" {
				seen["error"] = true
			}
		}
		if sc.Status == StatusError {
			seen["error"] = true
		}
		differed := len(sc.EarlierAttempts) > 0 || sc.Status == StatusDiffer || sc.Status == StatusKnownDiffer || sc.Status == StatusError
		if differed {
			row.Differed++
		}
		for p := range seen {
			counts[p]++
		}
	}
	for _, p := range sortedKeys(counts) {
		fp := FlakePath{Path: p, Runs: counts[p]}
		fp.MovedA = moved(p, sideRecords(runs, func(sc *ScenarioResult) *SideRecord { return sc.A }), opts)
		fp.MovedB = moved(p, sideRecords(runs, func(sc *ScenarioResult) *SideRecord { return sc.B }), opts)
		row.Paths = append(row.Paths, fp)
	}
	return row
}

func sideRecords(runs []*ScenarioResult, side func(*ScenarioResult) *SideRecord) []*SideRecord {
	var out []*SideRecord
	for _, sc := range runs {
		if r := side(sc); r != nil {
			out = append(out, r)
		}
	}
	return out
}

// racedDeletionSpread: a node's deletion time of a pod moved between runs, as far as its
// differing runs are concerned, when it spans half a relist period or more.
const racedDeletionSpread = relistPeriod / 2

var deletionPathRE = regexp.MustCompile(`^pods/([^/]+)/deletion$`)

// moved reports whether one node's records differ between runs at (or under) path.
func moved(path string, recs []*SideRecord, opts CompareOptions) bool {
	if m := deletionPathRE.FindStringSubmatch(path); m != nil {
		return deletionMoved(m[1], recs)
	}
	for i := range recs {
		for j := i + 1; j < len(recs); j++ {
			for _, d := range DiffSides(recs[i], recs[j], opts) {
				if pathsRelated(path, pathStem(d.Path)) {
					return true
				}
			}
		}
	}
	return false
}

// deletionMoved: the pod was gone in some runs and not in others, or its deletion time spans
// racedDeletionSpread or more.
func deletionMoved(pod string, recs []*SideRecord) bool {
	lo, hi := math.Inf(1), math.Inf(-1)
	var gone, notGone bool
	for _, r := range recs {
		p := r.Pods[pod]
		if p == nil || p.Deletion == nil {
			continue
		}
		if !p.Deletion.Gone {
			notGone = true
			continue
		}
		gone = true
		lo, hi = math.Min(lo, p.Deletion.Seconds), math.Max(hi, p.Deletion.Seconds)
	}
	return (gone && notGone) || (gone && hi-lo >= racedDeletionSpread)
}

var indexRE = regexp.MustCompile(`\[[0-9]+(,[0-9]+)*\]`)

// pathStem is a diff path with its numeric indexes replaced by "*".
func pathStem(p string) string { return indexRE.ReplaceAllString(p, "[*]") }

// pathsRelated: equal, or one is the other followed by ".", "[" or "/" and more.
func pathsRelated(a, b string) bool {
	under := func(p, q string) bool {
		return strings.HasPrefix(q, p) && len(q) > len(p) && strings.ContainsRune(".[/", rune(q[len(p)]))
	}
	return a == b || under(a, b) || under(b, a)
}

// raced names the node(s) whose value moved.
func (p FlakePath) raced(nodeA, nodeB string) string {
	switch {
	case p.MovedA && p.MovedB:
		return "both"
	case p.MovedA:
		return nodeA
	case p.MovedB:
		return nodeB
	}
	return "neither (steady)"
}

// WriteMarkdown writes the table as Markdown, ready to paste into test/compare/README.md.
func (t *FlakeTable) WriteMarkdown(w io.Writer) {
	fmt.Fprintf(w, "%d runs of the corpus on %s (A) and %s (B), each scenario once per run.\n\n", t.Runs, t.NodeA, t.NodeB)
	if len(t.Rows) == 0 {
		fmt.Fprintf(w, "All %d scenarios matched in every run.\n", t.Steady)
		return
	}
	fmt.Fprintln(w, "| scenario | runs that differed | paths that differed (runs) | node that raced |")
	fmt.Fprintln(w, "|---|---|---|---|")
	for _, r := range t.Rows {
		var paths, raced []string
		verdicts := map[string]bool{}
		for _, p := range r.Paths {
			paths = append(paths, fmt.Sprintf("`%s` (%d)", mdEscape(p.Path), p.Runs))
			v := p.raced(t.NodeA, t.NodeB)
			verdicts[v] = true
			raced = append(raced, fmt.Sprintf("%s: `%s`", v, mdEscape(p.Path)))
		}
		racedCell := strings.Join(raced, "; ")
		if len(verdicts) == 1 {
			racedCell = sortedKeys(verdicts)[0]
		}
		fmt.Fprintf(w, "| `%s` | %d/%d | %s | %s |\n", r.Scenario, r.Differed, r.Ran, strings.Join(paths, ", "), racedCell)
	}
	fmt.Fprintf(w, "\nScenarios that matched in every run: %d.\n", t.Steady)
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
