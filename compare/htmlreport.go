package compare

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"sort"
	"strings"
)

// The HTML report
//
// WriteHTML renders a Result as one self-contained page: inline styles, inline SVG, no script
// and nothing fetched from the network, so that it can be kept as a CI artefact and opened
// anywhere. It has a summary table with the score, then one section per scenario: the two
// nodes' timelines of each pod drawn side by side on one time axis (one bar per state a watch
// saw, coloured by phase, its whole normalised status in the bar's tooltip), the deletion time,
// the events of each side with those only one side had marked, and the diffs, "-" lines node
// A's and "+" lines node B's as in the text report. Pods and events that take part in a
// difference are highlighted.

// WriteHTML writes the report of r to w.
func WriteHTML(w io.Writer, r *Result) error {
	return htmlTemplate.Execute(w, buildHTMLReport(r))
}

// htmlReport is what the template renders; buildHTMLReport computes all geometry and
// highlighting so that the template only lays it out.
type htmlReport struct {
	NodeA, NodeB string
	Started      string
	Seconds      string
	Score        string
	Summary      Summary
	Failed       bool
	Counts       []htmlCount
	Scenarios    []htmlScenario
}

type htmlCount struct {
	Label string
	N     int
	Class string
}

type htmlScenario struct {
	ID, Anchor  string
	Description string
	Status      Status
	Class       string
	Known       string
	Seconds     string
	Attempts    int
	ErrorA      string
	ErrorB      string
	Open        bool
	Pods        []htmlPod
	Diffs       []htmlDiff
	Steps       []htmlStep
}

type htmlPod struct {
	Name      string
	Differs   bool
	Axis      []htmlTick
	Lanes     []htmlLane
	Deletions []string
	Events    []htmlEvent
	Width     float64
}

type htmlLane struct {
	Label string
	Y     float64
	Segs  []htmlSeg
}

type htmlSeg struct {
	X, W        float64
	Fill, Title string
	Label       string
}

type htmlTick struct {
	X     float64
	Label string
}

type htmlEvent struct {
	Key      string
	A, B     string
	OneSided bool
}

type htmlDiff struct {
	Path, PathB string
	A, B, Note  string
	Lines       []string
}

type htmlStep struct {
	Step, A, B string
	Differs    bool
}

// Timeline drawing geometry, in SVG user units (pixels at 100 %).
const (
	htmlLabelWidth = 48.0
	htmlPlotWidth  = 860.0
	htmlLaneHeight = 22.0
	htmlLaneGap    = 6.0
	htmlAxisHeight = 18.0
)

func buildHTMLReport(r *Result) htmlReport {
	rep := htmlReport{
		NodeA: r.NodeA, NodeB: r.NodeB,
		Started: r.Started.UTC().Format("2006-01-02 15:04:05 UTC"),
		Seconds: fmt.Sprintf("%.0f s", r.Seconds),
		Score:   r.ScoreLine(), Summary: r.Summary, Failed: r.Failed(),
	}
	s := r.Summary
	rep.Counts = []htmlCount{
		{"ran", s.Ran, ""},
		{"matching", s.Matching, "match"},
		{"differ", len(s.Differ), "differ"},
		{"known to differ", len(s.KnownDiffer), "known-differ"},
		{"now matching", len(s.NowMatching), "now-matching"},
		{"could not run", len(s.Errors), "error"},
		{"skipped", len(s.Skipped), "skipped"},
		{"matched on retry", len(s.MatchedOnRetry), ""},
	}
	for _, sc := range r.Scenarios {
		rep.Scenarios = append(rep.Scenarios, buildHTMLScenario(sc))
	}
	// Scenarios worth looking at first: differences and errors, then the rest in run order.
	sort.SliceStable(rep.Scenarios, func(i, j int) bool {
		return statusRank(rep.Scenarios[i].Status) < statusRank(rep.Scenarios[j].Status)
	})
	return rep
}

func statusRank(s Status) int {
	switch s {
	case StatusDiffer, StatusError:
		return 0
	case StatusKnownDiffer, StatusNowMatching:
		return 1
	}
	return 2
}

func buildHTMLScenario(sc *ScenarioResult) htmlScenario {
	id := sc.Category + "/" + sc.Name
	h := htmlScenario{
		ID: id, Anchor: "s-" + strings.NewReplacer("/", "-", ".", "-").Replace(id),
		Description: sc.Description, Status: sc.Status, Class: string(sc.Status),
		Seconds: fmt.Sprintf("%.0f s", sc.Seconds), Attempts: len(sc.EarlierAttempts),
		ErrorA: sc.A.errorText(), ErrorB: sc.B.errorText(),
		Open: sc.Status == StatusDiffer || sc.Status == StatusError,
	}
	if sc.Known != nil {
		h.Known = fmt.Sprintf("issue #%d: %s", sc.Known.Issue, sc.Known.Why)
	}
	for _, d := range sc.Diffs {
		h.Diffs = append(h.Diffs, htmlDiff{Path: d.Path, PathB: d.PathB, A: oneLine(d.A), B: oneLine(d.B), Note: d.Note, Lines: d.Lines})
	}
	diffPods := map[string]bool{}
	diffEvents := map[string]bool{}
	diffSteps := map[int]bool{}
	for _, d := range sc.Diffs {
		if name, rest, ok := podOfDiffPath(d.Path); ok {
			diffPods[name] = true
			if strings.HasPrefix(rest, "events") {
				diffEvents[name] = true
			}
		}
		var i int
		if _, err := fmt.Sscanf(d.Path, "steps[%d]", &i); err == nil {
			diffSteps[i] = true
		}
	}
	h.Steps = buildHTMLSteps(sc.A, sc.B, diffSteps)
	names := map[string]bool{}
	for _, side := range []*SideRecord{sc.A, sc.B} {
		if side != nil {
			for n := range side.Pods {
				names[n] = true
			}
		}
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	for _, n := range sorted {
		h.Pods = append(h.Pods, buildHTMLPod(n, podOf(sc.A, n), podOf(sc.B, n), diffPods[n], diffEvents[n]))
	}
	return h
}

// podOfDiffPath splits "pods/<name>/<rest>" into the pod's name and the rest.
func podOfDiffPath(path string) (name, rest string, ok bool) {
	after, found := strings.CutPrefix(path, "pods/")
	if !found {
		return "", "", false
	}
	name, rest, _ = strings.Cut(after, "/")
	return name, rest, name != ""
}

func podOf(s *SideRecord, name string) *PodRecord {
	if s == nil {
		return nil
	}
	return s.Pods[name]
}

func buildHTMLSteps(a, b *SideRecord, differs map[int]bool) []htmlStep {
	var as, bs []StepRecord
	if a != nil {
		as = a.Steps
	}
	if b != nil {
		bs = b.Steps
	}
	n := max(len(as), len(bs))
	out := make([]htmlStep, 0, n)
	for i := 0; i < n; i++ {
		st := htmlStep{Differs: differs[i]}
		if i < len(as) {
			st.Step, st.A = as[i].Step, stepText(as[i])
		}
		if i < len(bs) {
			if st.Step == "" {
				st.Step = bs[i].Step
			}
			st.B = stepText(bs[i])
		}
		out = append(out, st)
	}
	return out
}

func stepText(s StepRecord) string {
	t := s.Result
	if s.Exec != nil {
		t += " · " + execSummary(s.Exec)
	}
	return t
}

func buildHTMLPod(name string, a, b *PodRecord, differs, eventsDiffer bool) htmlPod {
	p := htmlPod{Name: name, Differs: differs, Width: htmlLabelWidth + htmlPlotWidth + 24}
	// One time axis for both sides: from the pods' creation to the last state seen, rounded up
	// to a whole number of seconds.
	end := 1.0
	for _, pr := range []*PodRecord{a, b} {
		if pr == nil {
			continue
		}
		for _, e := range pr.Timeline {
			end = math.Max(end, e.At+1)
		}
	}
	end = math.Ceil(end)
	scale := htmlPlotWidth / end
	step := tickStep(end)
	for t := 0.0; t <= end+1e-9; t += step {
		p.Axis = append(p.Axis, htmlTick{X: htmlLabelWidth + t*scale, Label: fmt.Sprintf("%gs", t)})
	}
	for i, side := range []struct {
		label string
		pod   *PodRecord
	}{{"A", a}, {"B", b}} {
		lane := htmlLane{Label: side.label, Y: htmlAxisHeight + float64(i)*(htmlLaneHeight+htmlLaneGap)}
		if side.pod != nil {
			tl := side.pod.Timeline
			for j, e := range tl {
				until := end
				if j+1 < len(tl) {
					until = tl[j+1].At
				}
				w := math.Max((until-e.At)*scale, 2)
				lane.Segs = append(lane.Segs, htmlSeg{
					X: htmlLabelWidth + e.At*scale, W: w,
					Fill: phaseColour(e.Phase), Title: fmt.Sprintf("%.1fs: %s", e.At, e.PodSnapshot.String()),
					Label: segLabel(e.PodSnapshot, w),
				})
			}
			if side.pod.CreateError != "" {
				lane.Segs = append(lane.Segs, htmlSeg{X: htmlLabelWidth, W: htmlPlotWidth, Fill: "#eee",
					Title: "create failed: " + side.pod.CreateError, Label: "create failed"})
			}
		}
		p.Lanes = append(p.Lanes, lane)
		if side.pod != nil && side.pod.Deletion != nil {
			d := side.pod.Deletion
			text := fmt.Sprintf("%s: deleted (grace %ds) and gone after %.1fs", side.label, d.GracePeriodSeconds, d.Seconds)
			if !d.Gone {
				text = fmt.Sprintf("%s: deleted (grace %ds), still there when the scenario ended", side.label, d.GracePeriodSeconds)
			}
			p.Deletions = append(p.Deletions, text)
		}
	}
	p.Events = buildHTMLEvents(a, b, eventsDiffer)
	return p
}

// tickStep picks an axis step giving at most about ten ticks.
func tickStep(end float64) float64 {
	for _, s := range []float64{1, 2, 5, 10, 15, 30, 60, 120, 300, 600} {
		if end/s <= 10 {
			return s
		}
	}
	return math.Ceil(end / 10)
}

func phaseColour(phase string) string {
	switch phase {
	case "Pending":
		return "#f3c969"
	case "Running":
		return "#7fb3e6"
	case "Succeeded":
		return "#8fd19e"
	case "Failed":
		return "#ef8f8f"
	}
	return "#cccccc"
}

// segLabel is the text drawn inside a bar: the phase and the containers' states, cut to what
// fits (about 6 units per character).
func segLabel(s PodSnapshot, width float64) string {
	parts := []string{s.Phase}
	for _, c := range s.Containers {
		parts = append(parts, c.Name+":"+c.State)
	}
	text := strings.Join(parts, " ")
	fit := int(width/6.2) - 1
	if fit < 2 {
		return ""
	}
	if len(text) > fit {
		return text[:fit-1] + "…"
	}
	return text
}

func buildHTMLEvents(a, b *PodRecord, differs bool) []htmlEvent {
	type pair struct{ a, b string }
	byKey := map[string]*pair{}
	var keys []string
	add := func(pr *PodRecord, isA bool) {
		if pr == nil {
			return
		}
		for _, e := range pr.Events {
			k := e.Key()
			pp, ok := byKey[k]
			if !ok {
				pp = &pair{}
				byKey[k] = pp
				keys = append(keys, k)
			}
			text := fmt.Sprintf("×%d %s", e.Count, e.Message)
			if isA {
				pp.a = text
			} else {
				pp.b = text
			}
		}
	}
	add(a, true)
	add(b, false)
	sort.Strings(keys)
	out := make([]htmlEvent, 0, len(keys))
	for _, k := range keys {
		pp := byKey[k]
		out = append(out, htmlEvent{Key: k, A: pp.a, B: pp.b, OneSided: differs && (pp.a == "" || pp.b == "")})
	}
	return out
}

var htmlTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"add": func(a, b float64) float64 { return a + b },
	"lanesHeight": func(n int) float64 {
		return htmlAxisHeight + float64(n)*(htmlLaneHeight+htmlLaneGap)
	},
	"laneHeight": func() float64 { return htmlLaneHeight },
	"lineClass": func(l string) string {
		switch {
		case strings.HasPrefix(l, "-"):
			return "minus"
		case strings.HasPrefix(l, "+"):
			return "plus"
		}
		return ""
	},
}).Parse(htmlPage))

const htmlPage = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>vk-cri compare: {{.NodeA}} vs {{.NodeB}}</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin: 0; display: inline; }
table { border-collapse: collapse; margin: .5em 0; }
td, th { border: 1px solid #ccc; padding: 2px 8px; text-align: left; vertical-align: top; }
.match { background: #e6f6ea; } .differ { background: #fbe3e3; } .error { background: #fde9c8; }
.known-differ { background: #f0e6fb; } .now-matching { background: #e3f0fb; } .skipped { background: #f2f2f2; }
section { border: 1px solid #ddd; margin: .6em 0; padding: .4em .8em; }
section.differ, section.error { border-color: #d55; }
.pod { margin: .6em 0 .8em 1em; } .pod.differs > .podname { color: #b00; font-weight: bold; }
.diffs { font-family: ui-monospace, monospace; font-size: 12px; white-space: pre-wrap; }
.minus { color: #a00; } .plus { color: #070; } .note { color: #555; }
tr.differs td, tr.onesided td { background: #f5b5b5; font-weight: bold; }
svg text { font: 11px ui-monospace, monospace; }
#score { font-size: 1.2em; font-weight: bold; }
</style>
</head>
<body>
<h1>vk-cri compare: A = node {{.NodeA}}, B = node {{.NodeB}}</h1>
<p>Started {{.Started}}, took {{.Seconds}}. <span id="score" class="{{if .Failed}}differ{{else}}match{{end}}" data-ran="{{.Summary.Ran}}" data-matching="{{.Summary.Matching}}">{{.Score}}</span></p>
<table id="summary">
<tr>{{range .Counts}}<th>{{.Label}}</th>{{end}}</tr>
<tr>{{range .Counts}}<td class="{{.Class}}" data-count="{{.Label}}">{{.N}}</td>{{end}}</tr>
</table>
<table id="scenarios">
<tr><th>scenario</th><th>outcome</th><th>time</th><th>earlier attempts</th></tr>
{{range .Scenarios}}<tr class="{{.Class}}" data-status="{{.Status}}"><td><a href="#{{.Anchor}}">{{.ID}}</a></td><td>{{.Status}}</td><td>{{.Seconds}}</td><td>{{if .Attempts}}{{.Attempts}}{{end}}</td></tr>
{{end}}</table>
{{range .Scenarios}}
<section id="{{.Anchor}}" class="{{.Class}}">
<details{{if .Open}} open{{end}}>
<summary><h2>{{.ID}}</h2> — {{.Status}} ({{.Seconds}}){{if .Known}}, known: {{.Known}}{{end}}</summary>
<p>{{.Description}}</p>
{{if .ErrorA}}<p class="minus">A could not run it: {{.ErrorA}}</p>{{end}}
{{if .ErrorB}}<p class="plus">B could not run it: {{.ErrorB}}</p>{{end}}
{{if .Diffs}}<div class="diffs">{{range .Diffs}}{{if .Note}}<div class="note">{{.Path}}: {{.Note}}</div>{{else}}<div class="minus">- {{.Path}}: {{.A}}</div><div class="plus">+ {{if .PathB}}{{.PathB}}{{else}}{{.Path}}{{end}}: {{.B}}</div>{{range .Lines}}<div class="{{lineClass .}}">    {{.}}</div>{{end}}{{end}}{{end}}</div>{{end}}
{{if .Steps}}<table><tr><th>step</th><th>A</th><th>B</th></tr>{{range .Steps}}<tr{{if .Differs}} class="differs"{{end}}><td>{{.Step}}</td><td>{{.A}}</td><td>{{.B}}</td></tr>{{end}}</table>{{end}}
{{range .Pods}}<div class="pod{{if .Differs}} differs{{end}}">
<div class="podname">pod {{.Name}}</div>
<svg width="{{.Width}}" height="{{lanesHeight (len .Lanes)}}" role="img" aria-label="timelines of pod {{.Name}}">
{{range .Axis}}<line x1="{{.X}}" x2="{{.X}}" y1="12" y2="{{lanesHeight 2}}" stroke="#ddd"/><text x="{{.X}}" y="10">{{.Label}}</text>
{{end}}{{range .Lanes}}{{$y := .Y}}<text x="0" y="{{add .Y 15}}">{{.Label}}</text>
{{range .Segs}}<g><title>{{.Title}}</title><rect x="{{.X}}" y="{{$y}}" width="{{.W}}" height="{{laneHeight}}" fill="{{.Fill}}" stroke="#fff"/>{{if .Label}}<text x="{{add .X 3}}" y="{{add $y 15}}">{{.Label}}</text>{{end}}</g>
{{end}}{{end}}</svg>
{{range .Deletions}}<div>{{.}}</div>{{end}}
{{if .Events}}<table><tr><th>event</th><th>A</th><th>B</th></tr>{{range .Events}}<tr{{if .OneSided}} class="onesided"{{end}}><td>{{.Key}}</td><td>{{.A}}</td><td>{{.B}}</td></tr>{{end}}</table>{{end}}
</div>{{end}}
</details>
</section>
{{end}}
</body>
</html>
`
