package eviction

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

func TestParseFlags(t *testing.T) {
	th, err := ParseFlags(Flags{
		Hard:            "memory.available<100Mi",
		Soft:            "memory.available<1Gi,nodefs.available<20%",
		SoftGracePeriod: map[string]string{"memory.available": "1m30s", "nodefs.available": "2m"},
		MinimumReclaim:  map[string]string{"memory.available": "500Mi", "nodefs.available": "5%"},
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, x := range th {
		s := x.String() + " grace=" + x.GracePeriod.String()
		if x.MinReclaim != nil {
			if x.MinReclaim.Quantity != nil {
				s += " min=" + x.MinReclaim.Quantity.String()
			} else {
				s += " min%"
			}
		}
		got = append(got, s)
	}
	want := "memory.available<100Mi grace=0s min=500Mi|memory.available<1Gi grace=1m30s min=500Mi|nodefs.available<20% grace=2m0s min%"
	if strings.Join(got, "|") != want {
		t.Errorf("got %q\nwant %q", strings.Join(got, "|"), want)
	}
	for _, tc := range []struct {
		f   Flags
		err string
	}{
		{Flags{Soft: "memory.available<1Gi"}, "grace period must be specified for the soft eviction threshold memory.available"},
		{Flags{SoftGracePeriod: map[string]string{"cpu.available": "1m"}}, "unsupported eviction signal cpu.available"},
		{Flags{SoftGracePeriod: map[string]string{"memory.available": "-1m"}}, "must be a positive value"},
		{Flags{MinimumReclaim: map[string]string{"memory.available": "-1Mi"}}, "negative eviction minimum reclaim"},
		{Flags{MinimumReclaim: map[string]string{"nodefs.available": "0%"}}, "must be positive"},
	} {
		if _, err := ParseFlags(tc.f); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%+v: error %v, want %q", tc.f, err, tc.err)
		}
	}
}

func TestDecideSoftThresholdAndMinimumReclaim(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	th, err := ParseFlags(Flags{Hard: "memory.available<100Mi", Soft: "memory.available<1Gi",
		SoftGracePeriod: map[string]string{"memory.available": "1m"},
		MinimumReclaim:  map[string]string{"memory.available": "512Mi"}})
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Thresholds: th, MaxPodGracePeriodSeconds: 20}
	short, long := pod("short", 0, ""), pod("long", 0, "")
	short.Spec.TerminationGracePeriodSeconds = ptr.To[int64](5)
	long.Spec.TerminationGracePeriodSeconds = ptr.To[int64](60)
	pods := []*v1.Pod{short, long}
	stats := []statsapi.PodStats{podStats("short", 200<<20, 0, 1), podStats("long", 100<<20, 0, 1)}

	// 900Mi available: the soft threshold is met, MemoryPressure at once, no eviction before
	// its grace period.
	d := decide(t0, opts, summary(900<<20, 50<<30, stats...), pods, state{})
	if !d.state.pressure[v1.NodeMemoryPressure] || d.threshold != nil {
		t.Fatalf("at first sight: pressure %v, threshold %v", d.state.pressure, d.threshold)
	}
	d = decide(t0.Add(59*time.Second), opts, summary(900<<20, 50<<30, stats...), pods, d.state)
	if d.threshold != nil {
		t.Fatalf("within the grace period: threshold %v", d.threshold)
	}
	// Grace period over: evict, with the pods' own grace capped at 20 s.
	d = decide(t0.Add(time.Minute), opts, summary(900<<20, 50<<30, stats...), pods, d.state)
	if d.threshold == nil || d.threshold.Hard() || len(d.candidates) != 2 {
		t.Fatalf("after the grace period: %+v", d)
	}
	graces := map[string]int64{}
	for _, c := range d.candidates {
		graces[c.pod.Name] = c.grace
	}
	if graces["short"] != 5 || graces["long"] != 20 {
		t.Errorf("grace periods %v, want short 5, long 20", graces)
	}
	// 1.2Gi available: above the threshold, but not by the minimum reclaim (1Gi+512Mi): still met.
	d = decide(t0.Add(70*time.Second), opts, summary(1200<<20, 50<<30, stats...), pods, d.state)
	if d.threshold == nil {
		t.Fatal("the minimum reclaim is not back: the threshold stays met")
	}
	// 1.6Gi: reclaimed; the condition stays for the transition period (0 here: gone next round).
	d = decide(t0.Add(80*time.Second), opts, summary(1600<<20, 50<<30, stats...), pods, d.state)
	if d.threshold != nil || len(d.state.met) != 0 {
		t.Errorf("reclaimed: threshold %v, met %v", d.threshold, d.state.met)
	}
	// A hard threshold evicts at once, with the minimum grace.
	d = decide(t0.Add(90*time.Second), opts, summary(50<<20, 50<<30, stats...), pods, d.state)
	if d.threshold == nil || !d.threshold.Hard() || d.candidates[0].grace != hardEvictionGrace {
		t.Errorf("hard: %+v", d)
	}
}

// fakeNode is a node whose nodefs frees up when the reclaimer runs.
type fakeNode struct {
	mu        sync.Mutex
	available uint64
	freed     uint64
	calls     []string
	evicted   []string
}

func (n *fakeNode) Summary(context.Context) (*statsapi.Summary, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return summary(4<<30, n.available, podStats("a", 1<<20, 1<<30, 1)), nil
}

func (n *fakeNode) DeleteAllUnusedContainers(context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.calls = append(n.calls, "containers")
	return nil
}

func (n *fakeNode) DeleteUnusedImages(context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.calls = append(n.calls, "images")
	n.available += n.freed
	return nil
}

func (n *fakeNode) EvictPod(pod *v1.Pod, _ string, _ v1.PodCondition, _ int64) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.evicted = append(n.evicted, pod.Name)
	return true
}

func TestReclaimBeforeEviction(t *testing.T) {
	th, _ := ParseThresholds("nodefs.available<10%")
	for _, tc := range []struct {
		name        string
		freed       uint64
		wantEvicted int
	}{
		{name: "images free enough", freed: 10 << 30},
		{name: "not enough", freed: 1 << 30, wantEvicted: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := &fakeNode{available: 5 << 30, freed: tc.freed}
			m := NewManager(Options{Thresholds: th, Clock: clocktesting.NewFakeClock(time.Unix(0, 0))}, n,
				func() []*v1.Pod { return []*v1.Pod{pod("a", 0, "")} }, n, logrus.NewEntry(logrus.New()))
			m.SetReclaimer(n)
			rec := &recorder{}
			m.opts.Recorder, m.opts.NodeName = rec, "n1"
			m.synchronize(context.Background())
			if len(rec.events) != 1 || rec.events[0] != "Warning EvictionThresholdMet Attempting to reclaim ephemeral-storage" {
				t.Errorf("events %q", rec.events)
			}
			if strings.Join(n.calls, ",") != "containers,images" {
				t.Errorf("reclaim calls %v, want dead containers then images", n.calls)
			}
			if len(n.evicted) != tc.wantEvicted {
				t.Errorf("evicted %v, want %d", n.evicted, tc.wantEvicted)
			}
			if !m.Pressure()[v1.NodeDiskPressure] {
				t.Error("DiskPressure is set when the threshold was met, reclaimed or not")
			}
		})
	}
}

func TestDeclaredCapacitySignals(t *testing.T) {
	th, _ := ParseThresholds("memory.available<100Mi")
	opts := Options{Thresholds: th, Capacity: v1.ResourceList{v1.ResourceMemory: resource.MustParse("1Gi")}}
	p := pod("hog", 0, "")
	// The host has 20Gi available; the node's pods use 950Mi of its 1Gi.
	s := summary(20<<30, 50<<30, podStats("hog", 950<<20, 0, 1))
	s.Pods[0].Memory = &statsapi.MemoryStats{WorkingSetBytes: ptr.To[uint64](950 << 20)}
	d := decide(time.Unix(0, 0), opts, s, []*v1.Pod{p}, state{})
	if !d.state.pressure[v1.NodeMemoryPressure] || d.threshold == nil || len(d.candidates) != 1 {
		t.Fatalf("pressure %v threshold %v", d.state.pressure, d.threshold)
	}
	if want := "The node was low on resource: memory. Threshold quantity: 100Mi, available: 74Mi. "; !strings.HasPrefix(d.candidates[0].message, want) {
		t.Errorf("message %q, want prefix %q", d.candidates[0].message, want)
	}
	// Without the declared capacity, the host's 20Gi: no pressure.
	opts.Capacity = nil
	if d := decide(time.Unix(0, 0), opts, s, []*v1.Pod{p}, state{}); d.threshold != nil {
		t.Errorf("host memory: threshold %v", d.threshold)
	}
}

type recorder struct{ events []string }

func (r *recorder) Eventf(_ k8sruntime.Object, kind, reason, format string, args ...any) {
	r.events = append(r.events, kind+" "+reason+" "+fmt.Sprintf(format, args...))
}
