package provider

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/flowcontrol"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	testingclock "k8s.io/utils/clock/testing"
)

func TestShowsBackoffNextRelist(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	exited := func(name string, ran time.Duration) *containerState {
		return &containerState{ID: name + "-1", Name: name, State: runtimeapi.ContainerState_CONTAINER_EXITED,
			StartedAt: t0, FinishedAt: t0.Add(ran)}
	}
	crash := map[string]waitingReason{"c": {Reason: reasonCrashLoopBackOff}}
	cases := []struct {
		name     string
		backoff  map[string]waitingReason
		previous map[string]waitingReason
		rt       *podRuntime
		want     bool
	}{
		{"an instance that exited at once", crash, nil, &podRuntime{Containers: []*containerState{exited("c", 30*time.Millisecond)}}, true},
		{"an instance that ran for a relist", crash, nil, &podRuntime{Containers: []*containerState{exited("c", time.Second)}}, false},
		{"an instance that ran 2 s", crash, nil, &podRuntime{Containers: []*containerState{exited("c", 2*time.Second)}}, false},
		{"the back-off already shows", crash, crash, &podRuntime{Containers: []*containerState{exited("c", 30*time.Millisecond)}}, false},
		{"another reason showed before", crash, map[string]waitingReason{"c": {Reason: "RunContainerError"}},
			&podRuntime{Containers: []*containerState{exited("c", 30*time.Millisecond)}}, true},
		{"no back-off", map[string]waitingReason{}, nil, &podRuntime{Containers: []*containerState{exited("c", 30*time.Millisecond)}}, false},
		{"not a crash-loop back-off", map[string]waitingReason{"c": {Reason: "ImagePullBackOff"}}, nil,
			&podRuntime{Containers: []*containerState{exited("c", 30*time.Millisecond)}}, false},
		{"no instance", crash, nil, &podRuntime{}, false},
		{"the newest instance decides", crash, nil, &podRuntime{Containers: []*containerState{exited("c", 2*time.Second), exited("c", 30*time.Millisecond)}}, false},
		{"never started", crash, nil, &podRuntime{Containers: []*containerState{{ID: "c-1", Name: "c", State: runtimeapi.ContainerState_CONTAINER_EXITED, FinishedAt: t0}}}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := showsBackoffNextRelist(tc.backoff, tc.previous, tc.rt, time.Second); got != tc.want {
				t.Errorf("showsBackoffNextRelist = %v, want %v", got, tc.want)
			}
		})
	}
}

// A container whose instance exited at once shows CrashLoopBackOff from the sync after the next
// relist, not only at the back-off's end: the sync that finds the back-off reports the exit and
// has the worker woken once the runtime was listed after it.
func TestShortLivedCrashShowsBackOffAfterTheNextRelist(t *testing.T) {
	pod := testPod()
	finished := testT0.Add(31 * time.Second)
	state := podRuntime{
		Sandboxes: []*sandboxState{sandbox("sb1", 0, true)},
		Containers: []*containerState{exited(pod.Spec.Containers[0], "a1", "sb1", 3, restarts(1), func(cs *containerState) {
			cs.StartedAt, cs.FinishedAt = finished.Add(-30*time.Millisecond), finished
		})},
	}
	f := newWorkerFixture(t, pod, state)
	f.p.runCtx = context.Background()
	f.p.relists = newRelistClock()
	f.p.cfg.RelistPeriod = time.Second
	f.p.restarts = flowBackoff{b: flowcontrol.NewFakeBackOff(backoffInitial, backoffMax, testingclock.NewFakeClock(finished.Add(time.Second)))}
	f.p.restarts.Restarted(backoffKey(pod, "app"), finished.Add(-time.Second))
	rec := f.add(pod)

	f.sync(t, rec)
	if got := appState(rec); got.Terminated == nil {
		t.Fatalf("the sync that finds the back-off shows %+v, want the exit", got)
	}
	select {
	case <-rec.wake:
		t.Fatal("the worker was woken before the runtime was listed again")
	default:
	}
	f.p.relists.completed(time.Now())
	select {
	case <-rec.wake:
	case <-time.After(10 * time.Second):
		t.Fatalf("the worker was not woken after the relist (runtime calls %v, reasons %v)", f.runtime.calls, rec.reasons)
	}
	f.sync(t, rec)
	if got := appState(rec); got.Waiting == nil || got.Waiting.Reason != reasonCrashLoopBackOff {
		t.Errorf("the sync after the relist shows %+v, want CrashLoopBackOff", got)
	}
}

func appState(rec *podRecord) v1.ContainerState {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.status == nil || len(rec.status.ContainerStatuses) == 0 {
		return v1.ContainerState{}
	}
	return rec.status.ContainerStatuses[0].State
}
