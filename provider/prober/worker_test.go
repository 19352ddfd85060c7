package prober

import (
	"context"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	critest "k8s.io/cri-api/pkg/apis/testing"
	clocktesting "k8s.io/utils/clock/testing"
	utilexec "k8s.io/utils/exec"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// fixture is a manager on a fake clock and the fake CRI runtime, probing one pod whose status
// the test sets.
type fixture struct {
	t      *testing.T
	clock  *clocktesting.FakeClock
	rt     *critest.FakeRuntimeService
	m      *Manager
	mu     sync.Mutex
	status *v1.PodStatus
	events []string
	wakes  []Kind
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{t: t, clock: clocktesting.NewFakeClock(t0), rt: critest.NewFakeRuntimeService()}
	f.m = NewManager(context.Background(), f.statusOf, f.rt,
		WithClock(f.clock),
		WithJitter(func(time.Duration) time.Duration { return 0 }),
		WithEvents(func(_ *v1.Pod, c string, _ bool, _, reason, msg string) {
			f.mu.Lock()
			f.events = append(f.events, reason+": "+msg)
			f.mu.Unlock()
		}),
		WithUpdates(func(_ types.UID, k Kind) {
			f.mu.Lock()
			f.wakes = append(f.wakes, k)
			f.mu.Unlock()
		}),
	)
	return f
}

func (f *fixture) statusOf(types.UID) (*v1.PodStatus, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.status == nil {
		return nil, false
	}
	return f.status.DeepCopy(), true
}

func (f *fixture) setStatus(s *v1.PodStatus) {
	f.mu.Lock()
	f.status = s
	f.mu.Unlock()
}

// running is the status of a pod whose container "c" (instance id) runs since startedAt.
func running(id string, startedAt time.Time, started bool) *v1.PodStatus {
	return &v1.PodStatus{
		Phase: v1.PodRunning,
		PodIP: "127.0.0.1",
		ContainerStatuses: []v1.ContainerStatus{{
			Name:        "c",
			ContainerID: "containerd://" + id,
			State:       v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(startedAt)}},
			Started:     &started,
		}},
	}
}

func execProbe(period, initialDelay, success, failure int32) *v1.Probe {
	return &v1.Probe{
		ProbeHandler:        v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"check"}}},
		PeriodSeconds:       period,
		InitialDelaySeconds: initialDelay,
		TimeoutSeconds:      1,
		SuccessThreshold:    success,
		FailureThreshold:    failure,
	}
}

func podWith(c v1.Container) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "uid-1"},
		Spec:       v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways, Containers: []v1.Container{c}},
	}
}

// newWorker makes the worker AddPod would make, without running its loop: the test calls
// doProbe itself.
func (f *fixture) newWorker(kind Kind, pod *v1.Pod) *worker {
	c := pod.Spec.Containers[0]
	spec := map[Kind]*v1.Probe{Liveness: c.LivenessProbe, Readiness: c.ReadinessProbe, Startup: c.StartupProbe}[kind]
	w := &worker{
		m: f.m, key: probeKey{podUID: string(pod.UID), container: c.Name, kind: kind}, kind: kind,
		pod: pod, container: c, spec: spec, results: f.m.cache(kind),
		stopCh: make(chan struct{}, 1), triggerCh: make(chan struct{}, 1),
	}
	f.m.mu.Lock()
	f.m.workers[w.key] = w
	f.m.mu.Unlock()
	return w
}

// failExec makes the next n exec probes exit 1.
func (f *fixture) failExec(n int) {
	for i := 0; i < n; i++ {
		f.rt.InjectError("ExecSync", utilexec.CodeExitError{Err: errExit, Code: 1})
	}
}

var errExit = &exitErr{}

type exitErr struct{}

func (*exitErr) Error() string { return "exit status 1" }

func (f *fixture) execCalls() int {
	f.rt.Lock()
	defer f.rt.Unlock()
	n := 0
	for _, c := range f.rt.Called {
		if c == "ExecSync" {
			n++
		}
	}
	return n
}

func (f *fixture) result(k Kind, id string) string {
	r, ok := f.m.Result(k, id)
	if !ok {
		return "none"
	}
	return r.String()
}

// TestThresholds walks each kind through runs of probe outcomes and checks the recorded
// verdict after each run.
func TestThresholds(t *testing.T) {
	type step struct {
		fail bool   // the probe's command exits 1
		want string // verdict after the run
	}
	tests := []struct {
		name  string
		kind  Kind
		probe *v1.Probe
		// before is the verdict once the instance is first seen.
		before string
		steps  []step
	}{
		{
			name: "readiness starts not ready, turns ready after successThreshold successes", kind: Readiness,
			probe: execProbe(1, 0, 2, 3), before: "Failure",
			steps: []step{{false, "Failure"}, {false, "Success"}, {true, "Success"}, {true, "Success"}, {true, "Failure"}, {false, "Failure"}, {false, "Success"}},
		},
		{
			name: "liveness starts alive, fails after failureThreshold failures in a row", kind: Liveness,
			probe: execProbe(1, 0, 1, 2), before: "Success",
			steps: []step{{true, "Success"}, {false, "Success"}, {true, "Success"}, {true, "Failure"}},
		},
		{
			name: "startup is unknown until it succeeds", kind: Startup,
			probe: execProbe(1, 0, 1, 3), before: "Unknown",
			steps: []step{{true, "Unknown"}, {false, "Success"}},
		},
		{
			name: "startup fails after failureThreshold", kind: Startup,
			probe: execProbe(1, 0, 1, 2), before: "Unknown",
			steps: []step{{true, "Unknown"}, {true, "Failure"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			c := v1.Container{Name: "c"}
			switch tc.kind {
			case Liveness:
				c.LivenessProbe = tc.probe
			case Readiness:
				c.ReadinessProbe = tc.probe
			case Startup:
				c.StartupProbe = tc.probe
			}
			w := f.newWorker(tc.kind, podWith(c))
			f.setStatus(running("id1", t0, tc.kind != Startup))
			w.newInstance("id1", &f.status.ContainerStatuses[0])
			if got := f.result(tc.kind, "id1"); got != tc.before {
				t.Fatalf("first seen: verdict %s, want %s", got, tc.before)
			}
			for i, s := range tc.steps {
				if s.fail {
					f.failExec(1)
				}
				if !w.doProbe(context.Background()) {
					t.Fatalf("run %d: worker stopped", i)
				}
				if got := f.result(tc.kind, "id1"); got != s.want {
					t.Fatalf("run %d: verdict %s, want %s", i, got, s.want)
				}
			}
		})
	}
}

// A liveness verdict of Failure is final for that instance: no more probes until a new one.
func TestLivenessFailureHoldsUntilNewInstance(t *testing.T) {
	f := newFixture(t)
	w := f.newWorker(Liveness, podWith(v1.Container{Name: "c", LivenessProbe: execProbe(1, 0, 1, 1)}))
	f.setStatus(running("id1", t0, true))
	f.failExec(1)
	w.doProbe(context.Background())
	if got := f.result(Liveness, "id1"); got != "Failure" {
		t.Fatalf("verdict %s, want Failure", got)
	}
	calls := f.execCalls()
	w.doProbe(context.Background())
	w.doProbe(context.Background())
	if f.execCalls() != calls {
		t.Fatalf("probed %d more times while on hold", f.execCalls()-calls)
	}
	f.clock.Step(5 * time.Second)
	f.setStatus(running("id2", f.clock.Now(), true))
	w.doProbe(context.Background())
	if f.execCalls() != calls+1 {
		t.Fatalf("new instance not probed")
	}
	if got := f.result(Liveness, "id1"); got != "none" {
		t.Fatalf("old instance's verdict kept: %s", got)
	}
	if got := f.result(Liveness, "id2"); got != "Success" {
		t.Fatalf("new instance verdict %s, want Success", got)
	}
}

// The startup probe gates the others: liveness and readiness are not run before the container
// is started, startup is not run after.
func TestStartupGate(t *testing.T) {
	f := newFixture(t)
	pod := podWith(v1.Container{Name: "c", LivenessProbe: execProbe(1, 0, 1, 1), ReadinessProbe: execProbe(1, 0, 1, 1), StartupProbe: execProbe(1, 0, 1, 1)})
	live, ready, startup := f.newWorker(Liveness, pod), f.newWorker(Readiness, pod), f.newWorker(Startup, pod)
	f.setStatus(running("id1", t0, false))
	live.doProbe(context.Background())
	ready.doProbe(context.Background())
	if n := f.execCalls(); n != 0 {
		t.Fatalf("liveness/readiness probed %d times before the container started", n)
	}
	startup.doProbe(context.Background())
	if n := f.execCalls(); n != 1 {
		t.Fatalf("startup probed %d times, want 1", n)
	}
	if got := f.result(Startup, "id1"); got != "Success" {
		t.Fatalf("startup verdict %s", got)
	}
	f.setStatus(running("id1", t0, true))
	startup.doProbe(context.Background())
	live.doProbe(context.Background())
	ready.doProbe(context.Background())
	if n := f.execCalls(); n != 3 {
		t.Fatalf("after start: %d probes, want 3 (liveness, readiness; startup no more)", n)
	}
	if got := f.result(Readiness, "id1"); got != "Success" {
		t.Fatalf("readiness verdict %s", got)
	}
}

func TestInitialDelay(t *testing.T) {
	f := newFixture(t)
	w := f.newWorker(Readiness, podWith(v1.Container{Name: "c", ReadinessProbe: execProbe(1, 5, 1, 1)}))
	f.setStatus(running("id1", t0, true))
	w.doProbe(context.Background())
	f.clock.Step(4 * time.Second)
	w.doProbe(context.Background())
	if n := f.execCalls(); n != 0 {
		t.Fatalf("probed %d times within the initial delay", n)
	}
	f.clock.Step(time.Second)
	w.doProbe(context.Background())
	if n := f.execCalls(); n != 1 {
		t.Fatalf("probed %d times after the initial delay, want 1", n)
	}
}

func TestNotRunning(t *testing.T) {
	exited := func(code int32) *v1.PodStatus {
		s := running("id1", t0, true)
		s.ContainerStatuses[0].State = v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: code}}
		return s
	}
	tests := []struct {
		name   string
		policy v1.RestartPolicy
		status *v1.PodStatus
		keep   bool
	}{
		{"exited, will restart", v1.RestartPolicyAlways, exited(0), true},
		{"exited 0 under OnFailure: done", v1.RestartPolicyOnFailure, exited(0), false},
		{"exited under Never: done", v1.RestartPolicyNever, exited(1), false},
		{"pod succeeded", v1.RestartPolicyAlways, &v1.PodStatus{Phase: v1.PodSucceeded}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.m.shouldRestart = func(_ *v1.Container, pod *v1.Pod, code int32) bool {
				return pod.Spec.RestartPolicy == v1.RestartPolicyAlways || (pod.Spec.RestartPolicy == v1.RestartPolicyOnFailure && code != 0)
			}
			pod := podWith(v1.Container{Name: "c", ReadinessProbe: execProbe(1, 0, 1, 1)})
			pod.Spec.RestartPolicy = tc.policy
			w := f.newWorker(Readiness, pod)
			f.setStatus(tc.status)
			if keep := w.doProbe(context.Background()); keep != tc.keep {
				t.Fatalf("keep going = %v, want %v", keep, tc.keep)
			}
			if f.execCalls() != 0 {
				t.Fatalf("a container that does not run was probed")
			}
		})
	}
}

// After a restart of vk-cri, a container that was already running keeps the API's view: no
// initial verdict, so no kill and no readiness flip until a probe decides.
func TestRestartKeepsVerdicts(t *testing.T) {
	f := newFixture(t)
	pod := podWith(v1.Container{Name: "c", LivenessProbe: execProbe(1, 0, 1, 2), ReadinessProbe: execProbe(1, 0, 1, 1)})
	live, ready := f.newWorker(Liveness, pod), f.newWorker(Readiness, pod)
	f.setStatus(running("id1", t0.Add(-time.Hour), true))
	f.failExec(1)
	live.doProbe(context.Background())
	if got := f.result(Liveness, "id1"); got != "none" {
		t.Fatalf("liveness verdict after one failure below the threshold: %s, want none", got)
	}
	pod.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}}
	st := running("id1", t0.Add(-time.Hour), true)
	f.m.UpdatePodStatus(pod, st)
	if !st.ContainerStatuses[0].Ready {
		t.Fatalf("a ready pod's container turned not ready across the restart")
	}
	pod.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionFalse}}
	st = running("id1", t0.Add(-time.Hour), true)
	f.m.UpdatePodStatus(pod, st)
	if st.ContainerStatuses[0].Ready {
		t.Fatalf("a pod that was not ready turned ready without a probe")
	}
	ready.doProbe(context.Background())
	st = running("id1", t0.Add(-time.Hour), true)
	f.m.UpdatePodStatus(pod, st)
	if !st.ContainerStatuses[0].Ready {
		t.Fatalf("not ready after a successful probe")
	}
}

func TestErroredProbeDoesNotCount(t *testing.T) {
	f := newFixture(t)
	w := f.newWorker(Liveness, podWith(v1.Container{Name: "c", LivenessProbe: execProbe(1, 0, 1, 1)}))
	f.setStatus(running("id1", t0, true))
	for i := 0; i < attempts; i++ {
		f.rt.InjectError("ExecSync", errUnreachable)
	}
	w.doProbe(context.Background())
	if got := f.result(Liveness, "id1"); got != "Success" {
		t.Fatalf("verdict %s after an errored probe, want Success (not counted)", got)
	}
	if n := f.execCalls(); n != attempts {
		t.Fatalf("%d attempts, want %d", n, attempts)
	}
	if len(f.events) != 1 || f.events[0] != "Unhealthy: Liveness probe errored and resulted in unknown state: runtime unreachable" {
		t.Fatalf("events %q", f.events)
	}
}

var errUnreachable = &unreachable{}

type unreachable struct{}

func (*unreachable) Error() string { return "runtime unreachable" }

func TestFailureEvent(t *testing.T) {
	f := newFixture(t)
	w := f.newWorker(Readiness, podWith(v1.Container{Name: "c", ReadinessProbe: execProbe(1, 0, 1, 1)}))
	f.setStatus(running("id1", t0, true))
	f.failExec(1)
	w.doProbe(context.Background())
	if len(f.events) != 1 || f.events[0] != "Unhealthy: Readiness probe failed: " {
		t.Fatalf("events %q", f.events)
	}
}
