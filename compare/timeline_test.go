package compare

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// tl builds a timeline from single-letter states: each letter becomes a distinct snapshot
// (phase "Pending" for P, "Running" for R, a container state for the others).
func tl(states string) []TimelineEntry {
	var out []TimelineEntry
	for i, r := range states {
		s := PodSnapshot{Phase: "Running"}
		switch r {
		case 'P':
			s.Phase = "Pending"
		case 'R':
		default:
			s.Containers = []ContainerSnapshot{{Name: "c", Kind: "regular", State: "waiting:" + string(r)}}
		}
		out = append(out, TimelineEntry{At: float64(i), PodSnapshot: s})
	}
	return out
}

func TestCollapse(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"P", "P"},
		{"PPPRRR", "PR"},
		{"PRPR", "PRPR"},
		{"PPaabbaaR", "PabaR"},
	} {
		got := Collapse(tl(c.in))
		if len(got) != len(c.want) {
			t.Errorf("Collapse(%q) has %d entries, want %q", c.in, len(got), c.want)
			continue
		}
		for i, e := range got {
			if !e.Equal(tl(c.want)[i].PodSnapshot) {
				t.Errorf("Collapse(%q)[%d] = %s, want %q", c.in, i, e, c.want)
			}
		}
		// The first entry of each run is kept, with its time.
		if len(got) > 0 && got[0].At != 0 {
			t.Errorf("Collapse(%q) did not keep the first entry", c.in)
		}
	}
}

func TestCompareTimelines(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want TimelineVerdict
		why  string
	}{
		{"", "", TimelinesCompatible, "both empty"},
		{"PR", "PR", TimelinesCompatible, "identical"},
		{"PPRR", "PR", TimelinesCompatible, "duplicates collapse"},
		{"PaR", "PR", TimelinesCompatible, "B skipped a state"},
		{"PR", "PaR", TimelinesCompatible, "A skipped a state (symmetric)"},
		{"PabcR", "PbR", TimelinesCompatible, "B merged three states into one of them"},
		{"PabcR", "PacR", TimelinesCompatible, "B skipped one in the middle"},
		{"PaRbR", "PR", TimelinesCompatible, "B missed a restart cycle's intermediate states but repeats are in order"},
		{"PR", "Pa", TimelinesFinalDiffers, "different final state"},
		{"PaR", "PRa", TimelinesFinalDiffers, "different final state, same states"},
		{"", "P", TimelinesFinalDiffers, "one side has no timeline"},
		{"PaR", "PbR", TimelinesIncompatible, "each side went through a state the other did not"},
		{"PabR", "PbaR", TimelinesIncompatible, "same states, other order"},
		{"PaR", "PaaR", TimelinesCompatible, "equal after collapsing"},
		{"PRaR", "PaRR", TimelinesCompatible, "B collapses to PaR, which A contains"},
		{"PRaR", "PabR", TimelinesIncompatible, "A's R before a is not in B, B's b not in A"},
		{"PR", "PRPR", TimelinesCompatible, "the shorter is a prefix-and-suffix subsequence"},
		{"aR", "PR", TimelinesIncompatible, "different first states, same length"},
	} {
		if got := CompareTimelines(tl(c.a), tl(c.b)); got != c.want {
			t.Errorf("%s: CompareTimelines(%q, %q) = %v, want %v", c.why, c.a, c.b, got, c.want)
		}
		// The verdict does not depend on which side is A.
		if got := CompareTimelines(tl(c.b), tl(c.a)); got != c.want {
			t.Errorf("%s: CompareTimelines(%q, %q) = %v, want %v (swapped)", c.why, c.b, c.a, got, c.want)
		}
	}
}

func TestAlign(t *testing.T) {
	for _, c := range []struct{ a, b, want string }{
		{"PaR", "PbR", "P=P a~b R=R"},
		{"PaR", "PR", "P=P a- R=R"},
		{"PR", "PabR", "P=P +a +b R=R"},
		{"PabR", "PcR", "P=P a~c b- R=R"},
		{"", "PR", "+P +R"},
		{"PR", "RP", "P- R=R +P"},
	} {
		a, b := strings.Split(c.a, ""), strings.Split(c.b, "")
		if c.a == "" {
			a = nil
		}
		var parts []string
		for _, r := range align(a, b) {
			switch {
			case r.a >= 0 && r.b >= 0 && a[r.a] == b[r.b]:
				parts = append(parts, a[r.a]+"="+b[r.b])
			case r.a >= 0 && r.b >= 0:
				parts = append(parts, a[r.a]+"~"+b[r.b])
			case r.a >= 0:
				parts = append(parts, a[r.a]+"-")
			default:
				parts = append(parts, "+"+b[r.b])
			}
		}
		if got := strings.Join(parts, " "); got != c.want {
			t.Errorf("align(%q, %q) = %q, want %q", c.a, c.b, got, c.want)
		}
	}
}

func ExampleCompareTimelines() {
	created := PodSnapshot{Phase: "Pending"}
	creating := PodSnapshot{Phase: "Pending", Containers: []ContainerSnapshot{{Name: "c", Kind: "regular", State: "waiting:ContainerCreating"}}}
	running := PodSnapshot{Phase: "Running", Containers: []ContainerSnapshot{{Name: "c", Kind: "regular", State: "running"}}}
	a := []TimelineEntry{{PodSnapshot: created}, {PodSnapshot: creating}, {PodSnapshot: running}}
	b := []TimelineEntry{{PodSnapshot: created}, {PodSnapshot: running}, {PodSnapshot: running}}
	fmt.Println(CompareTimelines(a, b))
	// Output: compatible
}

// alignSimilar pairs the states that differ in few fields and leaves the others alone.
func TestAlignSimilar(t *testing.T) {
	key := func(fields ...string) string { return strings.Join(fields, "\n") + "\n" }
	pending := key("phase=Pending")
	creating := key("phase=Pending", "c.state=waiting:ContainerCreating", "c.ready=false", "Ready=False")
	running := key("phase=Running", "c.state=running", "c.ready=true", "Ready=True")
	runningSched := key("phase=Running", "c.state=running", "c.ready=true", "Ready=True", "PodScheduled=True")
	done := key("phase=Succeeded", "c.state=terminated:Completed", "c.ready=false", "Ready=False")
	doneSched := key("phase=Succeeded", "c.state=terminated:Completed", "c.ready=false", "Ready=False", "PodScheduled=True")
	a := []string{pending, running, done}
	b := []string{pending, creating, runningSched, doneSched}
	got := fmt.Sprint(alignSimilar(a, b))
	want := "[{0 0} {-1 1} {1 2} {2 3}]"
	if got != want {
		t.Errorf("alignSimilar = %s, want %s", got, want)
	}
}

// testdata/timelines/*.yaml: two timelines and the expected verdict; the race-* ones were
// recorded live on two identical vk-cri nodes.
func TestTimelineFixtures(t *testing.T) {
	files, err := filepath.Glob("testdata/timelines/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	verdicts := map[string]TimelineVerdict{"compatible": TimelinesCompatible, "incompatible": TimelinesIncompatible, "final": TimelinesFinalDiffers}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c struct {
			Verdict string          `json:"verdict"`
			A       []TimelineEntry `json:"a"`
			B       []TimelineEntry `json:"b"`
		}
		if err := yaml.UnmarshalStrict(data, &c); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		want, ok := verdicts[c.Verdict]
		if !ok {
			t.Fatalf("%s: verdict %q", f, c.Verdict)
		}
		if got := CompareTimelines(c.A, c.B); got != want {
			t.Errorf("%s: %v, want %v", f, got, want)
		}
		if got := CompareTimelines(c.B, c.A); got != want {
			t.Errorf("%s (sides swapped): %v, want %v", f, got, want)
		}
	}
}

func TestProgressOrder(t *testing.T) {
	p := func(fields ...string) progress {
		m := map[string]string{}
		for _, f := range fields {
			k, v, _ := strings.Cut(f, "=")
			m[k] = v
		}
		return progressOf(m)
	}
	pending := p("phase=Pending")
	waiting := p("phase=Pending", "containers[c].state=waiting:ContainerCreating", "containers[c].restartCount=0")
	running := p("phase=Running", "containers[c].state=running", "containers[c].restartCount=0")
	terminated := p("phase=Running", "containers[c].state=terminated:Error exit=1", "containers[c].restartCount=0")
	backoff := p("phase=Running", "containers[c].state=waiting:CrashLoopBackOff", "containers[c].restartCount=0", "containers[c].lastState=terminated:Error exit=1")
	rerun := p("phase=Running", "containers[c].state=running", "containers[c].restartCount=1", "containers[c].lastState=terminated:Error exit=1")
	chain := []progress{pending, waiting, running, terminated, backoff, rerun}
	for i := range chain {
		for j := range chain {
			if got := chain[i].before(chain[j]); got != (i <= j) {
				t.Errorf("chain[%d].before(chain[%d]) = %v", i, j, got)
			}
		}
	}
	initTrue := p("phase=Pending", "conditions[Initialized]=True")
	initFalse := p("phase=Pending", "conditions[Initialized]=False(ContainersNotInitialized)")
	if !initFalse.before(initTrue) || initTrue.before(initFalse) {
		t.Error("Initialized False must come before True")
	}
}
