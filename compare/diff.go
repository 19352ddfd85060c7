package compare

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Absent is the value a diff shows for what one side does not have.
const Absent = "(absent)"

// Diff is one difference between the two sides' records.
type Diff struct {
	// Path locates the difference, e.g. "pods/main/timeline[3].containers[web].state"; indexes
	// are the A side's.
	Path string `json:"path"`
	// PathB is the B side's path when its indexes differ from A's.
	PathB string `json:"pathB,omitempty"`
	// A and B are the two values, rendered (Absent when a side has none); empty in a note.
	A string `json:"a,omitempty"`
	B string `json:"b,omitempty"`
	// Note explains a difference that is not about one value (a timeline verdict).
	Note string `json:"note,omitempty"`
	// Lines is a line diff of two multi-line texts ("-", "+" or " " then the line).
	Lines []string `json:"lines,omitempty"`
}

// Ignorer decides whether a diff path is ignored (CompareOptions.Ignore).
type Ignorer struct{ res []*regexp.Regexp }

// NewIgnorer compiles ignore patterns: "*" matches any run of characters, everything else is
// literal; a pattern matches a path equal to it or a path it is a prefix of, followed by ".",
// "[" or "/".
func NewIgnorer(patterns []string) Ignorer {
	var ig Ignorer
	for _, p := range patterns {
		parts := strings.Split(p, "*")
		for i := range parts {
			parts[i] = regexp.QuoteMeta(parts[i])
		}
		ig.res = append(ig.res, regexp.MustCompile(`^`+strings.Join(parts, ".*")+`(?:$|[.\[/].*)`))
	}
	return ig
}

// Ignored reports whether a path matches an ignore pattern.
func (ig Ignorer) Ignored(path string) bool {
	for _, re := range ig.res {
		if re.MatchString(path) {
			return true
		}
	}
	return false
}

// DiffSides compares two records of one scenario. No diffs means the scenario matches.
func DiffSides(a, b *SideRecord, opts CompareOptions) []Diff {
	return DiffSidesWith(a, b, opts, RunHistory{})
}

// DiffSidesWith compares two records of one scenario that was run before: hist is what the
// earlier runs showed (see RunHistory).
func DiffSidesWith(a, b *SideRecord, opts CompareOptions, hist RunHistory) []Diff {
	ig := NewIgnorer(opts.Ignore)
	var d differ
	d.ig = ig
	if a.Error != b.Error {
		d.value("error", orAbsent(a.Error), orAbsent(b.Error))
	}
	for i := 0; i < len(a.Objects) || i < len(b.Objects); i++ {
		d.value(fmt.Sprintf("objects[%d]", i), index(a.Objects, i), index(b.Objects, i))
	}
	for i := 0; i < len(a.Steps) || i < len(b.Steps); i++ {
		d.step(i, a.Steps, b.Steps)
	}
	names := map[string]bool{}
	for n := range a.Pods {
		names[n] = true
	}
	for n := range b.Pods {
		names[n] = true
	}
	for _, n := range sortedKeys(names) {
		d.pod(n, a.Pods[n], b.Pods[n], opts, hist.RefDeletions[n])
	}
	return d.out
}

type differ struct {
	ig  Ignorer
	out []Diff
}

func (d *differ) add(x Diff) {
	if d.ig.Ignored(x.Path) || (x.PathB != "" && d.ig.Ignored(x.PathB)) {
		return
	}
	d.out = append(d.out, x)
}

func (d *differ) value(path, a, b string) {
	if a != b {
		d.add(Diff{Path: path, A: a, B: b})
	}
}

// text compares two texts: short single-line texts as values, others as a line diff.
func (d *differ) text(path, a, b string) {
	if a == b {
		return
	}
	if !strings.Contains(a, "\n") && !strings.Contains(b, "\n") && len(a) <= 200 && len(b) <= 200 {
		d.add(Diff{Path: path, A: strconv.Quote(a), B: strconv.Quote(b)})
		return
	}
	d.add(Diff{Path: path, A: describeText(a), B: describeText(b), Lines: lineDiff(a, b)})
}

func describeText(s string) string {
	if s == "" {
		return `""`
	}
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	if n == 1 {
		return "1 line"
	}
	return fmt.Sprintf("%d lines", n)
}

func orAbsent(s string) string {
	if s == "" {
		return Absent
	}
	return s
}

func index(list []string, i int) string {
	if i < len(list) {
		return list[i]
	}
	return Absent
}

func (d *differ) step(i int, as, bs []StepRecord) {
	path := fmt.Sprintf("steps[%d]", i)
	if i >= len(as) || i >= len(bs) {
		var a, b = Absent, Absent
		if i < len(as) {
			a = as[i].Step + ": " + as[i].Result
		}
		if i < len(bs) {
			b = bs[i].Step + ": " + bs[i].Result
		}
		d.value(path, a, b)
		return
	}
	a, b := as[i], bs[i]
	ea, eb := a.Exec, b.Exec
	if ea == nil || eb == nil {
		d.value(path, a.Result, b.Result)
		if ea != nil || eb != nil {
			d.value(path+".exec", execSummary(ea), execSummary(eb))
		}
		return
	}
	// Both execs ran or were tried: their records say more than the results.
	if ea.Error != "" || eb.Error != "" {
		d.value(path+".exec", execSummary(ea), execSummary(eb))
		return
	}
	d.value(path+".exec.exitCode", strconv.Itoa(ea.ExitCode), strconv.Itoa(eb.ExitCode))
	d.text(path+".exec.stdout", ea.Stdout, eb.Stdout)
	d.text(path+".exec.stderr", ea.Stderr, eb.Stderr)
}

func execSummary(e *ExecRecord) string {
	if e == nil {
		return Absent
	}
	if e.Error != "" {
		return "error: " + e.Error
	}
	return fmt.Sprintf("exit %d, stdout %s, stderr %s", e.ExitCode, shortText(e.Stdout), shortText(e.Stderr))
}

// shortText is a text quoted when it is one short line, else its number of lines.
func shortText(s string) string {
	if t := strings.TrimSuffix(s, "\n"); !strings.Contains(t, "\n") && len(t) <= 80 {
		return strconv.Quote(s)
	}
	return describeText(s)
}

func (d *differ) pod(name string, a, b *PodRecord, opts CompareOptions, refDeletions []float64) {
	base := "pods/" + name
	if a == nil || b == nil {
		d.value(base, podSummary(a), podSummary(b))
		return
	}
	d.value(base+"/createError", orAbsent(a.CreateError), orAbsent(b.CreateError))
	d.timeline(base+"/timeline", a.Timeline, b.Timeline)
	d.events(base+"/events", a.Events, b.Events, opts.EventCounts)
	d.logs(base+"/logs", a.Logs, b.Logs)
	d.deletion(base+"/deletion", a.Deletion, b.Deletion, refDeletions)
	d.shape(base+"/final", a.Final, b.Final)
}

func podSummary(p *PodRecord) string {
	if p == nil {
		return Absent
	}
	return fmt.Sprintf("%d states, %d events", len(p.Timeline), len(p.Events))
}

// timeline compares two timelines without the fields the scenario ignores (their paths are
// tried with the entry's own index) and the racy ones (readyToStartRaces).
func (d *differ) timeline(path string, a, b []TimelineEntry) {
	ka, kb := timelineKeys(a, b, func(_, i int, fieldPath string) bool {
		return d.ig.Ignored(fmt.Sprintf("%s[%d].%s", path, i, fieldPath))
	})
	racy := racyReadyToStart(a, b)
	d.durations(path, a, b, ka, kb)
	verdict := compareKeyTimelines(ka, kb)
	if verdict == TimelinesCompatible {
		return
	}
	ia, ib := collapseKeys(ka), collapseKeys(kb)
	d.add(Diff{Path: path, Note: fmt.Sprintf("%s (A: %d states, B: %d states)", verdict, len(ia), len(ib))})

	// Pair similar states, then report each field difference once for all the pairs that
	// share it ("timeline[1,2].conditions[PodScheduled]"), and the states without a partner
	// one by one, in timeline order.
	type group struct {
		field, va, vb string
		ias, ibs      []string
	}
	var groups []*group
	byKey := map[string]*group{}
	var lone []Diff
	// The final states are always paired: their differences are what the verdict is about.
	ca, cb := pick(ka, ia), pick(kb, ib)
	var rows []alignment
	if len(ca) > 0 && len(cb) > 0 {
		rows = append(alignSimilar(ca[:len(ca)-1], cb[:len(cb)-1]), alignment{len(ca) - 1, len(cb) - 1})
	} else {
		rows = alignSimilar(ca, cb)
	}
	for _, row := range rows {
		switch {
		case row.a >= 0 && row.b >= 0:
			i, j := ia[row.a], ib[row.b]
			if ka[i] == kb[j] {
				continue
			}
			for _, f := range snapshotFieldDiffs(a[i].PodSnapshot, b[j].PodSnapshot) {
				if racy.leftOut(0, i, a[i].PodSnapshot, f.path) && racy.leftOut(1, j, b[j].PodSnapshot, f.path) {
					continue
				}
				if d.ig.Ignored(fmt.Sprintf("%s[%d].%s", path, i, f.path)) || d.ig.Ignored(fmt.Sprintf("%s[%d].%s", path, j, f.path)) {
					continue
				}
				k := f.path + "\x00" + f.a + "\x00" + f.b
				g := byKey[k]
				if g == nil {
					g = &group{field: f.path, va: f.a, vb: f.b}
					byKey[k] = g
					groups = append(groups, g)
				}
				g.ias = append(g.ias, strconv.Itoa(i))
				g.ibs = append(g.ibs, strconv.Itoa(j))
			}
		case row.a >= 0:
			i := ia[row.a]
			lone = append(lone, Diff{Path: fmt.Sprintf("%s[%d]", path, i), PathB: path, A: a[i].String(), B: "(no such state)"})
		default:
			j := ib[row.b]
			lone = append(lone, Diff{Path: path, PathB: fmt.Sprintf("%s[%d]", path, j), A: "(no such state)", B: b[j].String()})
		}
	}
	for _, g := range groups {
		pa := fmt.Sprintf("%s[%s].%s", path, strings.Join(g.ias, ","), g.field)
		pb := fmt.Sprintf("%s[%s].%s", path, strings.Join(g.ibs, ","), g.field)
		x := Diff{Path: pa, A: g.va, B: g.vb}
		if pb != pa {
			x.PathB = pb
		}
		d.out = append(d.out, x)
	}
	d.out = append(d.out, lone...)
}

// alignSimilar aligns two collapsed timelines (as masked keys) so that similar states are
// paired: a global alignment (Needleman-Wunsch) where pairing two states costs the number of
// fields in which they differ and leaving a state unpaired costs gapCost. Two states are
// therefore paired only when they differ in fewer than 2*gapCost fields and the pairing keeps
// both timelines in order.
func alignSimilar(a, b []string) []alignment {
	const gapCost = 3
	n, m := len(a), len(b)
	fa, fb := make([]map[string]string, n), make([]map[string]string, m)
	for i, k := range a {
		fa[i] = parseKey(k)
	}
	for j, k := range b {
		fb[j] = parseKey(k)
	}
	cost := func(i, j int) int { return fieldDistance(fa[i], fb[j]) }
	// dp[i][j]: least cost of aligning a[i:] with b[j:].
	dp := make([][]int, n+1)
	for i := range dp {
		dp[i] = make([]int, m+1)
	}
	for i := n; i >= 0; i-- {
		for j := m; j >= 0; j-- {
			switch {
			case i == n && j == m:
				dp[i][j] = 0
			case i == n:
				dp[i][j] = dp[i][j+1] + gapCost
			case j == m:
				dp[i][j] = dp[i+1][j] + gapCost
			default:
				best := min(dp[i+1][j], dp[i][j+1]) + gapCost
				if c := cost(i, j); c < 2*gapCost {
					best = min(best, dp[i+1][j+1]+c)
				}
				dp[i][j] = best
			}
		}
	}
	var out []alignment
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && cost(i, j) < 2*gapCost && dp[i][j] == dp[i+1][j+1]+cost(i, j):
			out = append(out, alignment{i, j})
			i++
			j++
		case i < n && dp[i][j] == dp[i+1][j]+gapCost:
			out = append(out, alignment{i, -1})
			i++
		default:
			out = append(out, alignment{-1, j})
			j++
		}
	}
	return out
}

// parseKey turns a masked key ("path=value" lines) back into fields.
func parseKey(k string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(strings.TrimSuffix(k, "\n"), "\n") {
		if p, v, ok := strings.Cut(line, "="); ok {
			m[p] = v
		}
	}
	return m
}

// fieldDistance counts the fields whose values differ (a field one side lacks counts once).
func fieldDistance(a, b map[string]string) int {
	n := 0
	for p, v := range a {
		if w, ok := b[p]; !ok || w != v {
			n++
		}
	}
	for p := range b {
		if _, ok := a[p]; !ok {
			n++
		}
	}
	return n
}

type fieldDiff struct{ path, a, b string }

// snapshotFieldDiffs lists the fields in which two snapshots differ, in the snapshot's field
// order; a container only one side has is one difference, not one per field.
func snapshotFieldDiffs(a, b PodSnapshot) []fieldDiff {
	var out []fieldDiff
	emit := func(p, va, vb string) {
		if va != vb {
			out = append(out, fieldDiff{p, va, vb})
		}
	}
	ca, cb := containersByName(a), containersByName(b)
	onlyOne := func(path string) (string, bool) {
		name, ok := containerOfPath(path)
		if !ok {
			return "", false
		}
		_, inA := ca[name]
		_, inB := cb[name]
		return name, inA != inB
	}
	fa, fb := a.flatten(), b.flatten()
	vb := map[string]string{}
	for _, f := range fb {
		vb[f.path] = f.value
	}
	seen := map[string]bool{}
	for _, f := range fa {
		seen[f.path] = true
		if name, ok := onlyOne(f.path); ok {
			if !seen["containers["+name+"]"] {
				seen["containers["+name+"]"] = true
				emit("containers["+name+"]", ca[name].summary(), Absent)
			}
			continue
		}
		v, ok := vb[f.path]
		if !ok {
			v = Absent
		}
		emit(f.path, f.value, v)
	}
	for _, f := range fb {
		if seen[f.path] {
			continue
		}
		if name, ok := onlyOne(f.path); ok {
			if !seen["containers["+name+"]"] {
				seen["containers["+name+"]"] = true
				emit("containers["+name+"]", Absent, cb[name].summary())
			}
			continue
		}
		emit(f.path, Absent, f.value)
	}
	return out
}

func containersByName(s PodSnapshot) map[string]ContainerSnapshot {
	m := map[string]ContainerSnapshot{}
	for _, c := range s.Containers {
		m[c.Name] = c
	}
	return m
}

// containerOfPath returns the container name of a flattened path "containers[NAME].field".
func containerOfPath(p string) (string, bool) {
	rest, ok := strings.CutPrefix(p, "containers[")
	if !ok {
		return "", false
	}
	i := strings.LastIndex(rest, "].")
	if i < 0 {
		return "", false
	}
	return rest[:i], true
}

func (d *differ) events(path string, a, b []EventRecord, counts bool) {
	ca, cb := eventCounts(a), eventCounts(b)
	keys := map[string]bool{}
	for k := range ca {
		keys[k] = true
	}
	for k := range cb {
		keys[k] = true
	}
	for _, k := range sortedKeys(keys) {
		na, nb := ca[k], cb[k]
		p := path + "[" + k + "]"
		switch {
		case na == 0 || nb == 0:
			d.value(p, presence(na), presence(nb))
		case counts:
			d.value(p+".count", strconv.Itoa(int(na)), strconv.Itoa(int(nb)))
		}
	}
}

func eventCounts(es []EventRecord) map[string]int32 {
	m := map[string]int32{}
	for _, e := range es {
		c := e.Count
		if c < 1 {
			c = 1
		}
		m[e.Key()] += c
	}
	return m
}

func presence(n int32) string {
	if n == 0 {
		return Absent
	}
	return "present"
}

func (d *differ) logs(path string, a, b map[string]*ContainerLogs) {
	names := map[string]bool{}
	for n := range a {
		names[n] = true
	}
	for n := range b {
		names[n] = true
	}
	for _, n := range sortedKeys(names) {
		la, lb := a[n], b[n]
		if la == nil {
			la = &ContainerLogs{}
		}
		if lb == nil {
			lb = &ContainerLogs{}
		}
		p := path + "[" + n + "]"
		d.logResult(p+".current", la.Current, lb.Current)
		d.logResult(p+".previous", la.Previous, lb.Previous)
	}
}

func (d *differ) logResult(path string, a, b *LogResult) {
	if a == nil || b == nil {
		if a != nil || b != nil {
			d.value(path, logSummary(a), logSummary(b))
		}
		return
	}
	if a.Error != "" || b.Error != "" {
		d.value(path, logSummary(a), logSummary(b))
		return
	}
	d.text(path, a.Text, b.Text)
}

func logSummary(l *LogResult) string {
	if l == nil {
		return Absent
	}
	if l.Error != "" {
		return "error: " + l.Error
	}
	return shortText(l.Text)
}

// lineDiff is a minimal line diff of two texts (longest common subsequence of lines), with at
// most two lines of context around changes.
func lineDiff(a, b string) []string {
	la, lb := splitLines(a), splitLines(b)
	const maxLines = 2000
	if len(la) > maxLines || len(lb) > maxLines {
		return []string{fmt.Sprintf("(texts too long for a line diff: %d and %d lines)", len(la), len(lb))}
	}
	rows := align(la, lb)
	type line struct {
		op   byte
		text string
	}
	var lines []line
	for _, r := range rows {
		switch {
		case r.a >= 0 && r.b >= 0 && la[r.a] == lb[r.b]:
			lines = append(lines, line{' ', la[r.a]})
		default:
			if r.a >= 0 {
				lines = append(lines, line{'-', la[r.a]})
			}
			if r.b >= 0 {
				lines = append(lines, line{'+', lb[r.b]})
			}
		}
	}
	const context = 2
	keep := make([]bool, len(lines))
	for i, l := range lines {
		if l.op != ' ' {
			for k := max(0, i-context); k <= min(len(lines)-1, i+context); k++ {
				keep[k] = true
			}
		}
	}
	var out []string
	skipped := false
	for i, l := range lines {
		if !keep[i] {
			skipped = true
			continue
		}
		if skipped {
			out = append(out, " ...")
			skipped = false
		}
		out = append(out, string(l.op)+l.text)
	}
	if skipped {
		out = append(out, " ...")
	}
	return out
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.Split(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	} else {
		lines[len(lines)-1] += " (no newline at end)"
	}
	return lines
}
