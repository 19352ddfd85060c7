package prober

import (
	"context"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	clocktesting "k8s.io/utils/clock/testing"
)

// scriptedExec counts exec probes by command; the command "hang" blocks until released.
type scriptedExec struct {
	mu    sync.Mutex
	calls map[string]int
	hang  chan struct{}
}

func (e *scriptedExec) ExecSync(ctx context.Context, _ string, cmd []string, _ time.Duration) ([]byte, []byte, error) {
	e.mu.Lock()
	e.calls[cmd[0]]++
	e.mu.Unlock()
	if cmd[0] == "hang" {
		select {
		case <-e.hang:
		case <-ctx.Done():
		}
	}
	return nil, nil, nil
}

func (e *scriptedExec) count(cmd string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.calls[cmd]
}

// A probe whose action hangs holds up neither the other probes nor the caller: the other
// container's workers keep their period, driven by the fake clock.
func TestHangingProbeBlocksNothingElse(t *testing.T) {
	ex := &scriptedExec{calls: map[string]int{}, hang: make(chan struct{})}
	defer close(ex.hang)
	clock := clocktesting.NewFakeClock(t0)
	started := true
	status := &v1.PodStatus{Phase: v1.PodRunning}
	for _, n := range []string{"slow", "fast"} {
		status.ContainerStatuses = append(status.ContainerStatuses, v1.ContainerStatus{
			Name: n, ContainerID: "containerd://" + n, Started: &started,
			State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(t0)}},
		})
	}
	var mu sync.Mutex
	m := NewManager(context.Background(), func(types.UID) (*v1.PodStatus, bool) {
		mu.Lock()
		defer mu.Unlock()
		return status.DeepCopy(), true
	}, ex, WithClock(clock), WithJitter(func(time.Duration) time.Duration { return 0 }))
	probe := func(cmd string) *v1.Probe {
		return &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{cmd}}}, PeriodSeconds: 1, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 1}
	}
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "uid-1"},
		Spec: v1.PodSpec{Containers: []v1.Container{
			{Name: "slow", ReadinessProbe: probe("hang")},
			{Name: "fast", ReadinessProbe: probe("ok"), LivenessProbe: probe("ok")},
		}},
	}
	m.AddPod(pod)
	m.AddPod(pod) // once per probe, however often it is called
	if n := m.WorkerCount(); n != 3 {
		t.Fatalf("%d workers, want 3", n)
	}
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		clock.Step(time.Second)
		return ex.count("ok") >= 10, nil
	})
	if err != nil {
		t.Fatalf("the fast container's probes ran %d times while the other's hung", ex.count("ok"))
	}
	if n := ex.count("hang"); n != 1 {
		t.Fatalf("the hanging probe ran %d times, want 1 (still running)", n)
	}
	if r, ok := m.Result(Readiness, "containerd://fast"); !ok || r != Success {
		t.Fatalf("fast readiness %v %v", r, ok)
	}
	m.RemovePod(pod.UID)
	err = wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		clock.Step(time.Second)
		return m.WorkerCount() == 1, nil // the hanging worker ends once its probe returns
	})
	if err != nil {
		t.Fatalf("%d workers left after RemovePod", m.WorkerCount())
	}
	if _, ok := m.Result(Readiness, "fast"); ok {
		t.Fatalf("a removed pod's verdicts are kept")
	}
}

// UpdatePodStatus: started follows the startup probe, ready the readiness probe once started.
func TestUpdatePodStatus(t *testing.T) {
	f := newFixture(t)
	pod := podWith(v1.Container{Name: "c", StartupProbe: execProbe(1, 0, 1, 1), ReadinessProbe: execProbe(1, 0, 1, 1)})
	f.newWorker(Startup, pod)
	f.newWorker(Readiness, pod)
	st := func() *v1.PodStatus {
		s := running("id1", t0, true)
		s.ContainerStatuses[0].Ready = true // what status generation says of a running container
		s.ContainerStatuses[0].Started = nil
		f.m.UpdatePodStatus(pod, s)
		return s
	}
	if s := st(); *s.ContainerStatuses[0].Started || s.ContainerStatuses[0].Ready {
		t.Fatalf("no verdicts: started=%v ready=%v, want false false", *s.ContainerStatuses[0].Started, s.ContainerStatuses[0].Ready)
	}
	f.m.startup.set("uid-1", "id1", Success)
	if s := st(); !*s.ContainerStatuses[0].Started || s.ContainerStatuses[0].Ready {
		t.Fatalf("started: started=%v ready=%v, want true false", *s.ContainerStatuses[0].Started, s.ContainerStatuses[0].Ready)
	}
	f.m.readiness.set("uid-1", "id1", Success)
	if s := st(); !s.ContainerStatuses[0].Ready {
		t.Fatalf("readiness success: not ready")
	}
	f.m.readiness.set("uid-1", "id1", Failure)
	if s := st(); s.ContainerStatuses[0].Ready {
		t.Fatalf("readiness failure: ready")
	}
	// A container without probes is started and ready when running.
	plain := podWith(v1.Container{Name: "c"})
	plain.UID = "uid-2"
	s := running("id9", t0, true)
	f.m.UpdatePodStatus(plain, s)
	if !*s.ContainerStatuses[0].Started || !s.ContainerStatuses[0].Ready {
		t.Fatalf("no probes: started=%v ready=%v", *s.ContainerStatuses[0].Started, s.ContainerStatuses[0].Ready)
	}
}
