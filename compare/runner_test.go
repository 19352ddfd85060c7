package compare

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

func podWith(phase v1.PodPhase, conds map[v1.PodConditionType]v1.ConditionStatus, cs ...v1.ContainerStatus) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "main"}}
	p.Status.Phase = phase
	for t, s := range conds {
		p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{Type: t, Status: s})
	}
	p.Status.ContainerStatuses = cs
	return p
}

func mustWait(t *testing.T, s string) WaitFor {
	t.Helper()
	w, err := ParseWaitFor(s)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestEvalWait(t *testing.T) {
	running := v1.ContainerStatus{Name: "c", RestartCount: 2, State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}
	backoff := v1.ContainerStatus{Name: "c", RestartCount: 1, State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}
	failed := v1.ContainerStatus{Name: "c", State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}}
	ready := map[v1.PodConditionType]v1.ConditionStatus{v1.PodReady: v1.ConditionTrue, v1.PodScheduled: v1.ConditionTrue}
	for _, c := range []struct {
		pod  trackedPod
		for_ string
		done bool
		why  string
	}{
		{trackedPod{}, "Running", false, ""},
		{trackedPod{latest: podWith(v1.PodRunning, ready, running)}, "Running", true, ""},
		{trackedPod{latest: podWith(v1.PodRunning, ready, running)}, "Ready", true, ""},
		{trackedPod{latest: podWith(v1.PodRunning, ready, running)}, "Scheduled", true, ""},
		{trackedPod{latest: podWith(v1.PodRunning, ready, running)}, "Condition:Ready=False", false, ""},
		{trackedPod{latest: podWith(v1.PodRunning, nil, running)}, "Condition:Ready=False", false, ""},
		{trackedPod{latest: podWith(v1.PodRunning, ready, running)}, "ContainerRunning:c", true, ""},
		{trackedPod{latest: podWith(v1.PodRunning, ready, running)}, "Restarts:c>=2", true, ""},
		{trackedPod{latest: podWith(v1.PodRunning, ready, running)}, "Restarts:c>=3", false, ""},
		{trackedPod{latest: podWith(v1.PodRunning, nil, backoff)}, "WaitingReason:c=CrashLoopBackOff", true, ""},
		{trackedPod{latest: podWith(v1.PodRunning, nil, backoff)}, "WaitingReason:c=ErrImagePull", false, ""},
		{trackedPod{latest: podWith(v1.PodFailed, nil, failed)}, "Failed", true, ""},
		{trackedPod{latest: podWith(v1.PodFailed, nil, failed)}, "TerminatedReason:c=Error", true, ""},
		{trackedPod{latest: podWith(v1.PodFailed, nil, failed)}, "ContainerTerminated:c", true, ""},
		{trackedPod{latest: podWith(v1.PodFailed, nil, failed)}, "Succeeded", false, "pod Failed"},
		{trackedPod{latest: podWith(v1.PodSucceeded, nil)}, "Running", false, "pod Succeeded"},
		{trackedPod{latest: podWith(v1.PodRunning, nil)}, "ContainerRunning:c", false, ""},
		{trackedPod{latest: podWith(v1.PodRunning, nil), gone: true}, "Deleted", true, ""},
		{trackedPod{latest: podWith(v1.PodRunning, nil), gone: true}, "Running", false, "pod deleted"},
		{trackedPod{latest: podWith(v1.PodRunning, nil)}, "Deleted", false, ""},
	} {
		done, why := evalWait(mustWait(t, c.for_), c.pod)
		if done != c.done || why != c.why {
			t.Errorf("evalWait(%s) on %+v = %v, %q; want %v, %q", c.for_, c.pod.latest.Status, done, why, c.done, c.why)
		}
	}
}

// The tracker keeps each distinct consecutive snapshot once, notices deletion, and stops the
// timeline when frozen.
func TestPodTracker(t *testing.T) {
	tr := newPodTracker([]string{"main"})
	start := time.Now()
	tr.setStart(start)
	pending := podWith(v1.PodPending, nil)
	running := podWith(v1.PodRunning, nil)
	runningAgain := running.DeepCopy()
	runningAgain.Status.PodIP = "10.88.0.5" // volatile: same snapshot
	other := podWith(v1.PodRunning, nil)
	other.Name = "not-ours"

	tr.observe(watch.Event{Type: watch.Added, Object: pending}, start)
	tr.observe(watch.Event{Type: watch.Modified, Object: running}, start.Add(time.Second))
	tr.observe(watch.Event{Type: watch.Modified, Object: runningAgain}, start.Add(2*time.Second))
	tr.observe(watch.Event{Type: watch.Added, Object: other}, start)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	gotGone := make(chan bool)
	go func() {
		ok, _, _ := tr.until(ctx, "main", func(tp trackedPod) (bool, string) { return tp.gone, "" })
		gotGone <- ok
	}()
	tr.freeze()
	tr.observe(watch.Event{Type: watch.Deleted, Object: podWith(v1.PodSucceeded, nil)}, start.Add(3*time.Second))
	if !<-gotGone {
		t.Fatal("the waiter did not see the deletion")
	}
	tp, _ := tr.snapshot("main")
	if len(tp.timeline) != 2 || tp.timeline[0].Phase != "Pending" || tp.timeline[1].Phase != "Running" || tp.timeline[1].At != 1 {
		t.Errorf("timeline = %+v", tp.timeline)
	}
	if !tp.gone || !tp.goneAt.Equal(start.Add(3*time.Second)) || tp.latest.Status.Phase != v1.PodSucceeded {
		t.Errorf("deletion not recorded: %+v", tp)
	}
	if _, ok := tr.pods["not-ours"]; ok {
		t.Error("a pod outside the scenario was tracked")
	}
}

func TestEventCountAndTime(t *testing.T) {
	now := time.Now()
	legacy := &v1.Event{Count: 3, FirstTimestamp: metav1.NewTime(now)}
	series := &v1.Event{Series: &v1.EventSeries{Count: 4}, EventTime: metav1.NewMicroTime(now.Add(time.Second))}
	bare := &v1.Event{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(now.Add(2 * time.Second))}}
	if eventCount(legacy) != 3 || eventCount(series) != 4 || eventCount(bare) != 1 {
		t.Errorf("counts %d %d %d", eventCount(legacy), eventCount(series), eventCount(bare))
	}
	if !eventTime(series).Equal(now.Add(time.Second)) || !eventTime(bare).Equal(metav1.NewTime(now.Add(2*time.Second)).Time) {
		t.Error("event times")
	}
	tr := newEventTracker()
	e := &v1.Event{ObjectMeta: metav1.ObjectMeta{UID: "u"}, Count: 5}
	tr.put(e)
	tr.put(&v1.Event{ObjectMeta: metav1.ObjectMeta{UID: "u"}, Count: 2}) // an older version
	if all := tr.all(); len(all) != 1 || all[0].Count != 5 {
		t.Errorf("event tracker kept %+v", all)
	}
}

func TestBarrier(t *testing.T) {
	b := newBarrier()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	done := make(chan struct{})
	go func() {
		b.waitOther(ctx, 0)
		close(done)
	}()
	select {
	case <-done:
		t.Fatal("side 0 went on before side 1 arrived")
	case <-time.After(50 * time.Millisecond):
	}
	b.arrive(1)
	b.arrive(1) // arriving twice (once ready, once on the way out) is fine
	<-done
	if ctx.Err() != nil {
		t.Fatal("timed out")
	}
}

func TestNormalizeRecord(t *testing.T) {
	rec := &SideRecord{
		Error:   "namespace cmp-x-a-aaaaa: boom",
		Objects: []string{"error: in cmp-x-a-aaaaa"},
		Steps:   []StepRecord{{Result: "error: pod uid-1 on vk-cmpa", Exec: &ExecRecord{Stdout: "10.88.0.4\n", Stderr: "ref", Error: "dial 1.2.3.4:10250"}}},
		Pods: map[string]*PodRecord{"main": {
			CreateError: "cmp-x-a-aaaaa",
			Events:      []EventRecord{{Message: "pulled in 1.5s"}},
			Logs:        map[string]*ContainerLogs{"c": {Current: &LogResult{Text: "on vk-cmpa"}, Previous: &LogResult{Error: "uid-1"}}},
		}},
	}
	NormalizeRecord(rec, Volatile{Namespaces: []string{"cmp-x-a-aaaaa"}, Nodes: []string{"vk-cmpa", "ref"}, UIDs: []string{"uid-1"}})
	p := rec.Pods["main"]
	for got, want := range map[string]string{
		rec.Error:                  "namespace <namespace>: boom",
		rec.Objects[0]:             "error: in <namespace>",
		rec.Steps[0].Result:        "error: pod <uid> on <node>",
		rec.Steps[0].Exec.Stdout:   "<ip>\n",
		rec.Steps[0].Exec.Stderr:   "<node>",
		rec.Steps[0].Exec.Error:    "dial <ip>:<port>",
		p.CreateError:              "<namespace>",
		p.Events[0].Message:        "pulled in <duration>",
		p.Logs["c"].Current.Text:   "on <node>",
		p.Logs["c"].Previous.Error: "<uid>",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}

func TestKeepEvent(t *testing.T) {
	collectAt := time.Date(2026, 11, 30, 14, 56, 0, 980_000_000, time.UTC)
	sec := func(s int) time.Time { return time.Date(2026, 11, 30, 14, 56, s, 0, time.UTC) }
	cases := []struct {
		name  string
		first time.Time
		gone  bool
		want  bool
	}{
		{"before the collection", sec(0), false, true},
		{"in the collection's second", sec(0), false, true},
		{"a later second, pod still there (a back-off repeating)", sec(1), false, false},
		{"a later second, pod gone (a grace-0 deletion's Killing)", sec(1), true, true},
		{"long after, pod gone", sec(9), true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := keepEvent(tc.first, collectAt, tc.gone); got != tc.want {
				t.Errorf("keepEvent = %v, want %v", got, tc.want)
			}
		})
	}
}
