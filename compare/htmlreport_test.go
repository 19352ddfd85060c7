package compare

import (
	"bytes"
	"encoding/xml"
	"regexp"
	"strings"
	"testing"

	"github.com/vk-cri/vk-cri/internal/golden"
)

func readReportFixture(t *testing.T) *Result {
	t.Helper()
	rs, err := ReadResults([]string{"testdata/report/result.json"})
	if err != nil {
		t.Fatal(err)
	}
	return rs[0]
}

func TestHTMLReportGolden(t *testing.T) {
	var b bytes.Buffer
	if err := WriteHTML(&b, readReportFixture(t)); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/report/report.html", b.Bytes())
}

func TestHTMLReportShowsTheScoreAndEscapesWhatNodesWrote(t *testing.T) {
	r := readReportFixture(t)
	var b bytes.Buffer
	if err := WriteHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if !strings.Contains(page, `data-ran="4" data-matching="1">matching 1/4 scenarios<`) {
		t.Errorf("the page does not carry the score of the summary")
	}
	for _, bad := range []string{"<script>", "<b>with markup</b>", "http://", "https://"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page contains %q: everything nodes and scenarios wrote must be escaped, nothing fetched", bad)
		}
	}
	// Differences and errors come first in the table, and their sections are open.
	rows := regexp.MustCompile(`<tr class="[^"]*" data-status="([^"]+)">`).FindAllStringSubmatch(page, -1)
	var order []string
	for _, m := range rows {
		order = append(order, m[1])
	}
	if got, want := strings.Join(order, ","), "differ,error,known-differ,match"; got != want {
		t.Errorf("scenario order %s, want %s", got, want)
	}
	if !regexp.MustCompile(`id="s-lifecycle-crash" class="differ">\s*<details open>`).MatchString(page) {
		t.Errorf("the differing scenario's section is not open")
	}
	if !strings.Contains(page, `<div class="pod differs">`) {
		t.Errorf("the pod that differs is not highlighted")
	}
	if !strings.Contains(page, `<tr class="onesided"><td>Warning BackOff spec.containers{c}</td><td></td><td>×1 Back-off restarting failed container</td>`) {
		t.Errorf("the event only B had is not marked")
	}
	if !strings.Contains(page, "B: deleted (grace 5s), still there when the scenario ended") || !strings.Contains(page, "A: deleted (grace 5s) and gone after 5.6s") {
		t.Errorf("deletion times missing")
	}
}

func TestHTMLTimelineBarsShareOneAxis(t *testing.T) {
	r := readReportFixture(t)
	rep := buildHTMLReport(r)
	var pod htmlPod
	for _, sc := range rep.Scenarios {
		if sc.ID == "lifecycle/plain" {
			pod = sc.Pods[0]
		}
	}
	if len(pod.Lanes) != 2 || len(pod.Lanes[0].Segs) != 3 || len(pod.Lanes[1].Segs) != 3 {
		t.Fatalf("lanes %+v", pod.Lanes)
	}
	// The axis ends at 5 s (last state at 3.2 s, plus 1, rounded up): 172 units a second.
	a, b := pod.Lanes[0].Segs, pod.Lanes[1].Segs
	if a[2].X >= b[2].X {
		t.Errorf("A's Succeeded (3.0s) at x=%v is not left of B's (3.2s) at x=%v", a[2].X, b[2].X)
	}
	end := a[2].X + a[2].W
	if end != b[2].X+b[2].W || end != htmlLabelWidth+htmlPlotWidth {
		t.Errorf("last bars end at %v and %v, want both at the axis end %v", end, b[2].X+b[2].W, htmlLabelWidth+htmlPlotWidth)
	}
	if !strings.HasPrefix(a[1].Title, "1.1s: Running") {
		t.Errorf("title %q", a[1].Title)
	}
}

func TestJUnitGoldenAndCounts(t *testing.T) {
	r := readReportFixture(t)
	var b bytes.Buffer
	if err := WriteJUnit(&b, r); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/report/junit.xml", b.Bytes())
	var suites junitSuites
	if err := xml.Unmarshal(b.Bytes(), &suites); err != nil {
		t.Fatalf("not XML: %v", err)
	}
	if suites.Tests != 4 || suites.Failures != 2 || suites.Errors != 1 || suites.Skipped != 0 {
		t.Errorf("counts tests=%d failures=%d errors=%d skipped=%d, want 4/2/1/0", suites.Tests, suites.Failures, suites.Errors, suites.Skipped)
	}
	// With --only-matching a known scenario that differs does not fail the run.
	r.OnlyMatching = true
	b.Reset()
	if err := WriteJUnit(&b, r); err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(b.Bytes(), &suites); err != nil {
		t.Fatal(err)
	}
	if suites.Failures != 1 {
		t.Errorf("failures with --only-matching = %d, want 1", suites.Failures)
	}
}
