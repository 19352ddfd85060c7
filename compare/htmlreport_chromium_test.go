package compare

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// The report rendered by a real browser: headless Chromium (Debian's chromium-headless-shell)
// loads the page from a file and dumps the DOM it built; the score and the counts it shows
// must be the JSON summary's. The stack's compare check (hack/compare-ci.sh) runs this on the
// report of the run it just made, with VKCRI_REPORT_JSON and VKCRI_REPORT_HTML naming the two
// files and VKCRI_CHROMIUM_REQUIRED=1; without a browser on the machine the test is skipped
// unless that variable is set.

func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{os.Getenv("VKCRI_CHROMIUM"), "chromium-headless-shell", "chromium"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("VKCRI_CHROMIUM_REQUIRED") == "1" {
		t.Fatal("no headless Chromium (chromium-headless-shell) on PATH")
	}
	t.Skip("no headless Chromium on PATH (apt-get install chromium-headless-shell)")
	return ""
}

func TestHTMLReportRendersInChromium(t *testing.T) {
	browser := chromium(t)
	jsonPath, htmlPath := os.Getenv("VKCRI_REPORT_JSON"), os.Getenv("VKCRI_REPORT_HTML")
	if jsonPath == "" {
		jsonPath = "testdata/report/result.json"
		htmlPath = filepath.Join(t.TempDir(), "report.html")
		rs, err := ReadResults([]string{jsonPath})
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(htmlPath)
		if err != nil {
			t.Fatal(err)
		}
		if err := WriteHTML(f, rs[0]); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	rs, err := ReadResults([]string{jsonPath})
	if err != nil {
		t.Fatal(err)
	}
	want := rs[0].Summary
	abs, err := filepath.Abs(htmlPath)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu",
		"--user-data-dir="+t.TempDir(), "--dump-dom", "file://"+abs)
	dom, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s --dump-dom: %v", browser, err)
	}
	score := regexp.MustCompile(`id="score"[^>]*data-ran="(\d+)" data-matching="(\d+)">([^<]*)<`).FindSubmatch(dom)
	if score == nil {
		t.Fatalf("the rendered page has no score (%d bytes of DOM)", len(dom))
	}
	ran, _ := strconv.Atoi(string(score[1]))
	matching, _ := strconv.Atoi(string(score[2]))
	if ran != want.Ran || matching != want.Matching || string(score[3]) != rs[0].ScoreLine() {
		t.Errorf("rendered score %q (ran %d, matching %d); the JSON says %q", score[3], ran, matching, rs[0].ScoreLine())
	}
	counts := map[string]int{"differ": len(want.Differ), "could not run": len(want.Errors), "known to differ": len(want.KnownDiffer), "skipped": len(want.Skipped)}
	for label, n := range counts {
		m := regexp.MustCompile(`data-count="` + regexp.QuoteMeta(label) + `">(\d+)<`).FindSubmatch(dom)
		if m == nil || string(m[1]) != strconv.Itoa(n) {
			t.Errorf("rendered count %q = %q, the JSON says %d", label, m, n)
		}
	}
	rows := regexp.MustCompile(`data-status="[^"]+"`).FindAll(dom, -1)
	if len(rows) != len(rs[0].Scenarios) {
		t.Errorf("the rendered table has %d scenario rows, the JSON %d scenarios", len(rows), len(rs[0].Scenarios))
	}
}
