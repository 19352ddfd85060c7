package compare

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
)

// JUnit XML for CI systems: one test case per scenario, classname "compare.<category>". A
// scenario that differs is a failure, one that could not be run an error, one skipped (known,
// with --only-matching) skipped; a known scenario that differs is a failure too unless the run
// was --only-matching, as the exit code says (Result.Failed).

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string          `xml:"name,attr"`
	Tests     int             `xml:"tests,attr"`
	Failures  int             `xml:"failures,attr"`
	Errors    int             `xml:"errors,attr"`
	Skipped   int             `xml:"skipped,attr"`
	Time      string          `xml:"time,attr"`
	Timestamp string          `xml:"timestamp,attr"`
	Props     []junitProperty `xml:"properties>property"`
	Cases     []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Classname string        `xml:"classname,attr"`
	Name      string        `xml:"name,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitProblem `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes r as JUnit XML.
func WriteJUnit(w io.Writer, r *Result) error {
	suite := junitSuite{
		Name:      fmt.Sprintf("vk-cri compare %s vs %s", r.NodeA, r.NodeB),
		Time:      seconds(r.Seconds),
		Timestamp: r.Started.UTC().Format("2006-01-02T15:04:05"),
		Props: []junitProperty{{Name: "nodeA", Value: r.NodeA}, {Name: "nodeB", Value: r.NodeB},
			{Name: "score", Value: r.ScoreLine()}},
	}
	for _, sc := range r.Scenarios {
		c := junitCase{Classname: "compare." + sc.Category, Name: sc.Name, Time: seconds(sc.Seconds)}
		var text bytes.Buffer
		PrintScenario(&text, sc)
		known := ""
		if sc.Known != nil {
			known = fmt.Sprintf(" (known, issue #%d: %s)", sc.Known.Issue, sc.Known.Why)
		}
		switch sc.Status {
		case StatusDiffer:
			c.Failure = &junitProblem{Message: fmt.Sprintf("the nodes differ in %d places", len(sc.Diffs)), Type: "differ", Text: text.String()}
		case StatusKnownDiffer:
			if !r.OnlyMatching {
				c.Failure = &junitProblem{Message: "the nodes differ" + known, Type: "known-differ", Text: text.String()}
			}
		case StatusError:
			c.Error = &junitProblem{Message: "could not be run", Type: "error", Text: text.String()}
		case StatusSkipped:
			c.Skipped = &junitProblem{Message: "skipped" + known}
		default:
			if len(sc.EarlierAttempts) > 0 {
				c.SystemOut = text.String()
			}
		}
		switch {
		case c.Failure != nil:
			suite.Failures++
		case c.Error != nil:
			suite.Errors++
		case c.Skipped != nil:
			suite.Skipped++
		}
		suite.Tests++
		suite.Cases = append(suite.Cases, c)
	}
	all := junitSuites{Name: "vk-cri compare", Tests: suite.Tests, Failures: suite.Failures, Errors: suite.Errors,
		Skipped: suite.Skipped, Time: suite.Time, Suites: []junitSuite{suite}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(all); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func seconds(s float64) string { return fmt.Sprintf("%.3f", s) }
