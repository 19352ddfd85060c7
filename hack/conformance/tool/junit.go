package main

// Tallies of the JUnit XML the e2e suite writes (--report-dir: junit_01.xml, one report for all
// ginkgo processes). Ginkgo lists every spec of the binary; the ones the focus/skip regexps did
// not select are "skipped" with the bare message "skipped", and so are the selected specs that
// never started because the suite was interrupted (timeout): --focus/--skip tell them apart.

import (
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
)

type junitCase struct {
	Name    string  `xml:"name,attr"`
	Status  string  `xml:"status,attr"`
	Time    float64 `xml:"time,attr"`
	Skipped *struct {
		Message string `xml:"message,attr"`
	} `xml:"skipped"`
	Failure *struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",chardata"`
	} `xml:"failure"`
	Error *struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",chardata"`
	} `xml:"error"`
}

type junitSuite struct {
	Name       string  `xml:"name,attr"`
	Time       float64 `xml:"time,attr"`
	Properties []struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	} `xml:"properties>property"`
	Cases []junitCase `xml:"testcase"`
}

func (s *junitSuite) property(name string) string {
	for _, p := range s.Properties {
		if p.Name == name {
			return p.Value
		}
	}
	return ""
}

// outcome of one spec.
const (
	outPassed      = "passed"
	outFailed      = "failed"
	outSkipped     = "skipped"      // selected, skipped at run time (Skip(), unsupported provider, ...)
	outNotRun      = "not run"      // selected, never started (suite interrupted or timed out)
	outNotSelected = "not selected" // left out by focus/skip
)

type tally struct {
	file      string
	duration  float64
	outcomes  map[string]string // spec name -> outcome
	reasons   map[string]string // spec name -> skip reason / failure first line
	suiteFail []string          // failed suite-level nodes (BeforeSuite, AfterSuite, reporting)
}

func (t *tally) count(o string) int {
	n := 0
	for _, v := range t.outcomes {
		if v == o {
			n++
		}
	}
	return n
}

func (t *tally) names(o string) []string {
	var out []string
	for k, v := range t.outcomes {
		if v == o {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

func readJUnit(file string, focus, skip *regexp.Regexp) (*tally, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var suites []junitSuite
	dec := xml.NewDecoder(f)
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "testsuite" {
			var s junitSuite
			if err := dec.DecodeElement(&s, &se); err != nil {
				return nil, fmt.Errorf("%s: %w", file, err)
			}
			suites = append(suites, s)
		}
	}
	if len(suites) == 0 {
		return nil, fmt.Errorf("%s: no <testsuite>", file)
	}
	// Without explicit regexps, those ginkgo recorded in the report (one of each).
	if focus == nil && skip == nil {
		if f := suites[0].property("FocusStrings"); f != "" {
			focus, _ = regexp.Compile(f)
		}
		if s := suites[0].property("SkipStrings"); s != "" {
			skip, _ = regexp.Compile(s)
		}
	}
	t := &tally{file: file, outcomes: map[string]string{}, reasons: map[string]string{}}
	for _, s := range suites {
		t.duration += s.Time
		for _, c := range s.Cases {
			name, isSpec := strings.CutPrefix(c.Name, "[It] ")
			failed := c.Status != "passed" && c.Status != "skipped" && c.Status != "pending"
			if !isSpec {
				if failed {
					t.suiteFail = append(t.suiteFail, c.Name)
				}
				continue
			}
			var o, reason string
			switch {
			case c.Status == "passed":
				o = outPassed
			case failed:
				o = outFailed
				switch {
				case c.Failure != nil:
					reason = firstLine(c.Failure.Message + "\n" + c.Failure.Text)
				case c.Error != nil:
					reason = firstLine(c.Error.Message + "\n" + c.Error.Text)
				}
				reason = c.Status + ": " + reason
			case c.Skipped != nil && c.Skipped.Message != "skipped" && c.Skipped.Message != "pending":
				o = outSkipped
				reason = strings.TrimPrefix(c.Skipped.Message, "skipped - ")
			case focus != nil && focus.MatchString(name) && (skip == nil || !skip.MatchString(name)):
				o = outNotRun
			default:
				o = outNotSelected
			}
			// A spec name reported twice (should not happen): keep the worse outcome.
			if prev, ok := t.outcomes[name]; ok && prev == outFailed {
				continue
			}
			t.outcomes[name] = o
			if reason != "" {
				t.reasons[name] = reason
			}
		}
	}
	return t, nil
}

func regexpFlags(fs *flag.FlagSet) (focus, skip *string) {
	focus = fs.String("focus", "", "the run's focus regexp: selected specs that were not run are counted as 'not run'")
	skip = fs.String("skip", "", "the run's skip regexp")
	return
}

func compileRegexps(focus, skip string) (*regexp.Regexp, *regexp.Regexp, error) {
	var f, s *regexp.Regexp
	var err error
	if focus != "" {
		if f, err = regexp.Compile(focus); err != nil {
			return nil, nil, fmt.Errorf("--focus: %w", err)
		}
	}
	if skip != "" {
		if s, err = regexp.Compile(skip); err != nil {
			return nil, nil, fmt.Errorf("--skip: %w", err)
		}
	}
	return f, s, nil
}

func cmdSummary(args []string) error {
	fs := flag.NewFlagSet("summary", flag.ExitOnError)
	file := fs.String("junit", "", "JUnit XML report")
	node := fs.String("node", "", "node name, for the header")
	focusS, skipS := regexpFlags(fs)
	_ = fs.Parse(args)
	focus, skip, err := compileRegexps(*focusS, *skipS)
	if err != nil {
		return err
	}
	t, err := readJUnit(*file, focus, skip)
	if err != nil {
		return err
	}
	w := os.Stdout
	fmt.Fprintf(w, "node: %s\n", *node)
	fmt.Fprintf(w, "report: %s\n", t.file)
	if *focusS != "" {
		fmt.Fprintf(w, "focus: %s\nskip: %s\n", *focusS, *skipS)
	}
	sel := t.count(outPassed) + t.count(outFailed) + t.count(outSkipped) + t.count(outNotRun)
	fmt.Fprintf(w, "selected: %d\n", sel)
	fmt.Fprintf(w, "passed: %d\n", t.count(outPassed))
	fmt.Fprintf(w, "failed: %d\n", t.count(outFailed))
	fmt.Fprintf(w, "skipped: %d\n", t.count(outSkipped))
	fmt.Fprintf(w, "not run (suite interrupted or timed out): %d\n", t.count(outNotRun))
	fmt.Fprintf(w, "suite duration: %.0fs\n", t.duration)
	if len(t.suiteFail) > 0 {
		fmt.Fprintf(w, "\nfailed suite nodes (%d):\n", len(t.suiteFail))
		for _, n := range t.suiteFail {
			fmt.Fprintf(w, "  %s\n", n)
		}
	}
	fmt.Fprintf(w, "\nfailed specs (%d):\n", t.count(outFailed))
	for _, n := range t.names(outFailed) {
		fmt.Fprintf(w, "  - %s\n      %s\n", n, t.reasons[n])
	}
	if n := t.count(outSkipped); n > 0 {
		fmt.Fprintf(w, "\nskipped specs (%d):\n", n)
		for _, n := range t.names(outSkipped) {
			fmt.Fprintf(w, "  - %s\n      %s\n", n, t.reasons[n])
		}
	}
	if n := t.count(outNotRun); n > 0 {
		fmt.Fprintf(w, "\nspecs not run (%d):\n", n)
		for _, n := range t.names(outNotRun) {
			fmt.Fprintf(w, "  - %s\n", n)
		}
	}
	return nil
}

func cmdCompare(args []string) error {
	fs := flag.NewFlagSet("compare", flag.ExitOnError)
	vkFile := fs.String("vk", "", "JUnit XML report of the vk-cri node")
	refFile := fs.String("ref", "", "JUnit XML report of the reference node")
	vkName := fs.String("vk-name", "VK", "column title")
	refName := fs.String("ref-name", "REF", "column title")
	vkFocus := fs.String("vk-focus", "", "focus regexp of the VK run (selected specs not run count as 'not run')")
	vkSkip := fs.String("vk-skip", "", "skip regexp of the VK run")
	refFocus := fs.String("ref-focus", "", "focus regexp of the REF run")
	refSkip := fs.String("ref-skip", "", "skip regexp of the REF run")
	_ = fs.Parse(args)
	vkF, vkS, err := compileRegexps(*vkFocus, *vkSkip)
	if err != nil {
		return err
	}
	refF, refS, err := compileRegexps(*refFocus, *refSkip)
	if err != nil {
		return err
	}
	vk, err := readJUnit(*vkFile, vkF, vkS)
	if err != nil {
		return err
	}
	ref, err := readJUnit(*refFile, refF, refS)
	if err != nil {
		return err
	}
	w := os.Stdout
	fmt.Fprintf(w, "%-44s %12s %12s\n", "", *vkName, *refName)
	for _, o := range []string{outPassed, outFailed, outSkipped, outNotRun} {
		fmt.Fprintf(w, "%-44s %12d %12d\n", o, vk.count(o), ref.count(o))
	}
	fmt.Fprintf(w, "%-44s %11.0fs %11.0fs\n", "suite duration", vk.duration, ref.duration)

	var failOnVK, notRunOnVK, passOnVKOnly []string
	for name, ro := range ref.outcomes {
		vo := vk.outcomes[name]
		switch {
		case ro == outPassed && vo == outFailed:
			failOnVK = append(failOnVK, name)
		case ro == outPassed && vo != outPassed:
			notRunOnVK = append(notRunOnVK, fmt.Sprintf("%s  [%s: %s]", name, *vkName, orNone(vo)))
		case ro != outPassed && vo == outPassed:
			passOnVKOnly = append(passOnVKOnly, fmt.Sprintf("%s  [%s: %s]", name, *refName, orNone(ro)))
		}
	}
	for name, vo := range vk.outcomes {
		if _, ok := ref.outcomes[name]; !ok && vo == outPassed {
			passOnVKOnly = append(passOnVKOnly, fmt.Sprintf("%s  [%s: absent]", name, *refName))
		}
	}
	sort.Strings(failOnVK)
	sort.Strings(notRunOnVK)
	sort.Strings(passOnVKOnly)
	fmt.Fprintf(w, "\npass on %s, fail on %s (%d):\n", *refName, *vkName, len(failOnVK))
	for _, n := range failOnVK {
		fmt.Fprintf(w, "  - %s\n      %s\n", n, vk.reasons[n])
	}
	if len(notRunOnVK) > 0 {
		fmt.Fprintf(w, "\npass on %s, not run or skipped on %s (%d):\n", *refName, *vkName, len(notRunOnVK))
		for _, n := range notRunOnVK {
			fmt.Fprintf(w, "  - %s\n", n)
		}
	}
	if len(passOnVKOnly) > 0 {
		fmt.Fprintf(w, "\npass on %s, not on %s (%d):\n", *vkName, *refName, len(passOnVKOnly))
		for _, n := range passOnVKOnly {
			fmt.Fprintf(w, "  - %s\n", n)
		}
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "absent"
	}
	return s
}
