package provider

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"

	"github.com/vk-cri/vk-cri/cri"
)

// workerFixture is a Provider on the fake runtime, volumes and probes, with a fake API holding
// the pod: what syncPod and terminate need, and nothing else.
type workerFixture struct {
	p       *Provider
	runtime *fakeRuntime
	volumes *fakeVolumes
	probes  *noProbes
	api     *fake.Clientset
	events  *record.FakeRecorder
}

func newWorkerFixture(t *testing.T, pod *v1.Pod, state podRuntime) *workerFixture {
	t.Helper()
	f := &workerFixture{runtime: &fakeRuntime{state: state}, volumes: &fakeVolumes{}, probes: &noProbes{},
		events: record.NewFakeRecorder(100)}
	if pod != nil {
		f.api = fake.NewSimpleClientset(pod.DeepCopy())
	} else {
		f.api = fake.NewSimpleClientset()
	}
	root := t.TempDir()
	sysctls, err := newSysctlPolicy(nil)
	if err != nil {
		t.Fatal(err)
	}
	f.p = &Provider{
		cfg: Config{NodeName: "node-1", ResyncPeriod: 10 * time.Second, RootDir: root, PodLogRoot: filepath.Join(root, "logs"),
			Volumes: f.volumes, Pods: f.api.CoreV1(), Metrics: noMetrics{}},
		rt:       &cri.Client{},
		runtime:  f.runtime,
		recorder: f.events,
		log:      logrus.NewEntry(logrus.New()),
		pods:     newPodStore(),
		restarts: newFlowBackoff(),
		pulls:    newFlowBackoff(),
		probes:   f.probes,
		sysctls:  sysctls,
		alloc:    newAllocationStore(filepath.Join(root, allocationFile)),
		deletor:  newContainerDeletor(f.runtime.RemoveContainer, time.Minute),
	}
	go f.p.deletor.run(t.Context())
	return f
}

// add stores the pod's record as the API or the runtime (pod nil) gave it.
func (f *workerFixture) add(pod *v1.Pod) *podRecord {
	rec, _ := f.p.pods.add(newPodRecord(podIdentity{Namespace: testPodNS, Name: testPodName, UID: testPodUID}, pod))
	return rec
}

func (f *workerFixture) sync(t *testing.T, rec *podRecord) (time.Duration, bool) {
	t.Helper()
	next, gone, err := f.p.syncPod(context.Background(), rec)
	if err != nil {
		t.Fatalf("syncPod: %v", err)
	}
	return next, gone
}

// stopCalls are the runtime's StopContainer calls, with their timeouts.
func (f *workerFixture) stopCalls() []string {
	f.runtime.mu.Lock()
	defer f.runtime.mu.Unlock()
	var out []string
	for _, c := range f.runtime.calls {
		if len(c) > 14 && c[:14] == "StopContainer " {
			out = append(out, c)
		}
	}
	return out
}

// finalStatusInAPI is the status the pod was patched with before its deletion from the API.
func (f *workerFixture) finalStatusInAPI(t *testing.T) (*v1.PodStatus, bool) {
	t.Helper()
	var st *v1.PodStatus
	deleted := false
	for _, a := range f.api.Actions() {
		switch act := a.(type) {
		case clienttesting.PatchActionImpl:
			var body struct {
				Status v1.PodStatus `json:"status"`
			}
			if err := json.Unmarshal(act.GetPatch(), &body); err != nil {
				t.Fatal(err)
			}
			st = &body.Status
		case clienttesting.DeleteActionImpl:
			deleted = true
		}
	}
	return st, deleted
}

// terminationPod is web/default with a Secret volume and a memory emptyDir, a 20 s grace period
// and a 5 s active deadline, its container "app" running since a minute before testT0.
func terminationPod() *v1.Pod {
	pod := testPod()
	grace, deadline := int64(20), int64(5)
	pod.Spec.TerminationGracePeriodSeconds = &grace
	pod.Spec.ActiveDeadlineSeconds = &deadline
	pod.Spec.Volumes = []v1.Volume{
		{Name: "secret", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "s"}}},
		{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory}}},
	}
	pod.Status.Phase = v1.PodRunning
	return pod
}

func runningState(pod *v1.Pod) podRuntime {
	return podRuntime{
		Sandboxes:  []*sandboxState{sandbox("sb1", 0, true)},
		Containers: []*containerState{running(pod.Spec.Containers[0], "c1", "sb1")},
	}
}

// Every way a pod ends goes the one termination path: the containers stopped within the grace
// period the reason gives, the sandbox stopped, the volumes torn down, the status the reason
// gives; a deleted pod is removed from the runtime and the API, the others stay.
func TestTerminationForEveryReason(t *testing.T) {
	now := metav1.Now()
	started := metav1.NewTime(time.Now().Add(-time.Minute))
	cases := []struct {
		name string
		// pod is the pod as the API gives it (nil: an orphan, known only from the runtime).
		pod   func() *v1.Pod
		state func(*v1.Pod) podRuntime
		// begin asks for the termination, or nil when the sync itself finds the reason.
		begin func(f *workerFixture, rec *podRecord)

		wantReason terminationReason
		wantState  podWorkState
		wantStops  []string
		// wantPhase and wantStatusReason are the pod's status once terminated; for a removed
		// pod, the final status written to the API before its deletion.
		wantPhase        v1.PodPhase
		wantStatusReason string
		wantRemoved      bool
		// wantContainersGone: an evicted pod's stopped containers leave the runtime while the pod
		// stays (the kubelet's container deletor).
		wantContainersGone bool
	}{
		{
			name: "deleted", pod: terminationPod, state: runningState,
			begin: func(f *workerFixture, rec *podRecord) {
				deleted := terminationPod()
				grace := int64(10)
				deleted.DeletionTimestamp, deleted.DeletionGracePeriodSeconds = &now, &grace
				f.p.requestDeletion(rec, deleted)
			},
			wantReason: terminationDeleted, wantState: podRemoved, wantStops: []string{"StopContainer c1 10"},
			wantPhase: v1.PodFailed, wantRemoved: true,
		},
		{
			name: "orphaned", pod: func() *v1.Pod { return nil }, state: runningState,
			begin:      func(f *workerFixture, rec *podRecord) { f.p.requestDeletion(rec, nil) },
			wantReason: terminationOrphaned, wantState: podRemoved,
			// 1 s for an orphan, of which the container gets the 2 s minimum.
			wantStops: []string{"StopContainer c1 2"}, wantRemoved: true,
		},
		{
			name: "evicted", pod: terminationPod, state: runningState,
			begin: func(f *workerFixture, rec *podRecord) {
				if !f.p.EvictPod(rec.view(), "The node was low on resource: memory.", v1.PodCondition{Type: v1.DisruptionTarget, Status: v1.ConditionTrue}, 0) {
					t.Fatal("EvictPod refused a running pod")
				}
			},
			wantReason: terminationEvicted, wantState: podTerminated, wantStops: []string{"StopContainer c1 2"},
			wantPhase: v1.PodFailed, wantStatusReason: reasonEvicted, wantContainersGone: true,
		},
		{
			name: "deadline exceeded",
			pod: func() *v1.Pod {
				pod := terminationPod()
				pod.Status.StartTime = &started
				return pod
			},
			state:      runningState,
			wantReason: terminationDeadlineExceeded, wantState: podTerminated, wantStops: []string{"StopContainer c1 20"},
			wantPhase: v1.PodFailed, wantStatusReason: reasonDeadlineExceeded,
		},
		{
			name: "rejected at admission",
			pod: func() *v1.Pod {
				pod := terminationPod()
				pod.Status.Phase = v1.PodPending
				pod.Spec.SecurityContext = &v1.PodSecurityContext{Sysctls: []v1.Sysctl{{Name: "kernel.msgmax", Value: "1"}}}
				return pod
			},
			state:      func(*v1.Pod) podRuntime { return podRuntime{} },
			wantReason: terminationRejected, wantState: podTerminated,
			wantPhase: v1.PodFailed, wantStatusReason: reasonSysctlForbidden,
		},
		{
			name: "finished",
			pod: func() *v1.Pod {
				pod := terminationPod()
				pod.Spec.RestartPolicy = v1.RestartPolicyNever
				pod.Spec.ActiveDeadlineSeconds = nil
				return pod
			},
			state: func(pod *v1.Pod) podRuntime {
				return podRuntime{
					Sandboxes:  []*sandboxState{sandbox("sb1", 0, true)},
					Containers: []*containerState{exited(pod.Spec.Containers[0], "c1", "sb1", 0)},
				}
			},
			wantReason: terminationFinished, wantState: podTerminated,
			wantPhase: v1.PodSucceeded,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := tc.pod()
			f := newWorkerFixture(t, pod, tc.state(terminationPod()))
			rec := f.add(pod)
			if tc.begin != nil {
				tc.begin(f, rec)
			}
			_, gone := f.sync(t, rec)

			l := rec.lifecycleNow()
			if l.reason != tc.wantReason || l.state != tc.wantState {
				t.Errorf("lifecycle %s (%s), want %s (%s)", l.state, l.reason, tc.wantState, tc.wantReason)
			}
			if gone != tc.wantRemoved {
				t.Errorf("gone %v, want %v", gone, tc.wantRemoved)
			}
			if got := f.stopCalls(); !slices.Equal(got, tc.wantStops) {
				t.Errorf("container stops %v, want %v", got, tc.wantStops)
			}
			if !slices.Equal(f.volumes.tornDown, []types.UID{testPodUID}) {
				t.Errorf("volumes torn down for %v, want once for the pod", f.volumes.tornDown)
			}
			rt, _ := f.runtime.inspectPod(context.Background(), testPodUID)
			for _, sb := range rt.Sandboxes {
				if sb.Ready {
					t.Errorf("sandbox %s still ready", sb.ID)
				}
			}
			if tc.wantRemoved {
				if len(rt.Sandboxes)+len(rt.Containers) != 0 {
					t.Errorf("runtime still holds %d sandboxes, %d containers", len(rt.Sandboxes), len(rt.Containers))
				}
				final, deleted := f.finalStatusInAPI(t)
				if pod == nil {
					if len(f.api.Actions()) != 0 {
						t.Errorf("API calls for an orphan: %v", f.api.Actions())
					}
					return
				}
				if !deleted || final == nil || final.Phase != tc.wantPhase || final.Reason != tc.wantStatusReason {
					t.Errorf("API: deleted %v, final status %+v; want deleted with phase %s reason %q", deleted, final, tc.wantPhase, tc.wantStatusReason)
				}
				return
			}
			hadContainers := len(tc.state(terminationPod()).Containers) != 0
			switch {
			case tc.wantContainersGone && len(rt.Containers) != 0:
				t.Errorf("the runtime still holds %d containers of the pod", len(rt.Containers))
			case !tc.wantContainersGone && len(rt.Containers) == 0 && hadContainers:
				t.Error("the containers of a pod that stays were removed")
			}
			st := rec.view().Status
			if st.Phase != tc.wantPhase || st.Reason != tc.wantStatusReason {
				t.Errorf("status %s (%q), want %s (%q)", st.Phase, st.Reason, tc.wantPhase, tc.wantStatusReason)
			}
			// The pod's next syncs keep the ends of its containers, in the runtime or not.
			f.sync(t, rec)
			if got := rec.view().Status; !equality.Semantic.DeepEqual(got.ContainerStatuses, st.ContainerStatuses) || got.Phase != st.Phase {
				t.Errorf("after another sync: phase %s, containers %+v; want %s, %+v", got.Phase, got.ContainerStatuses, st.Phase, st.ContainerStatuses)
			}
			if _, deleted := f.finalStatusInAPI(t); deleted {
				t.Error("a pod that stays was deleted from the API")
			}
			// A pod that stays is removed once deleted, keeping the status it ended with.
			f.p.requestDeletion(rec, nil)
			if _, gone := f.sync(t, rec); !gone {
				t.Fatal("the terminated pod was not removed once deleted")
			}
			if l := rec.lifecycleNow(); l.state != podRemoved || l.reason != tc.wantReason {
				t.Errorf("after the deletion: %s (%s), want removed (%s)", l.state, l.reason, tc.wantReason)
			}
			if got := rec.view().Status; got.Phase != tc.wantPhase || got.Reason != tc.wantStatusReason {
				t.Errorf("status once removed %s (%q), want %s (%q)", got.Phase, got.Reason, tc.wantPhase, tc.wantStatusReason)
			}
			if len(f.volumes.tornDown) != 1 {
				t.Errorf("volumes torn down %d times, want once", len(f.volumes.tornDown))
			}
		})
	}
}

// A runtime error interrupts the termination; the worker's next try goes on from where it was.
func TestTerminationResumesAfterAnError(t *testing.T) {
	pod := terminationPod()
	f := newWorkerFixture(t, pod, runningState(pod))
	rec := f.add(pod)
	if !f.p.EvictPod(pod, "evicted", v1.PodCondition{}, 5) {
		t.Fatal("EvictPod refused a running pod")
	}
	f.runtime.failInspect = context.DeadlineExceeded
	if _, _, err := f.p.syncPod(context.Background(), rec); err == nil {
		t.Fatal("syncPod hid the runtime's error")
	}
	if l := rec.lifecycleNow(); l.state != podTerminating {
		t.Fatalf("after the error: %s, want still terminating", l.state)
	}
	if retryAfter(context.DeadlineExceeded) <= 0 {
		t.Error("no retry after an error")
	}
	f.sync(t, rec)
	if l := rec.lifecycleNow(); l.state != podTerminated || !l.volumesTornDown {
		t.Errorf("after the retry: %s, volumes torn down %v", l.state, l.volumesTornDown)
	}
	if got := f.stopCalls(); !slices.Equal(got, []string{"StopContainer c1 5"}) {
		t.Errorf("stops %v", got)
	}
}

// A deleted pod whose container never started reports, once its sandbox is stopped, the status
// the kubelet's SyncTerminatingPod writes (still Pending, its sandbox not ready), and its final
// status (Failed) only in its turn, one relist after the stop, as SyncTerminatedPod does: the
// final one reported at once replaced the other before anything saw it.
func TestDeletedPendingPodShowsItsStoppedStatusBeforeTheFinalOne(t *testing.T) {
	pod := testPod()
	pod.Status.Phase = v1.PodPending
	f := newWorkerFixture(t, pod, podRuntime{Sandboxes: []*sandboxState{sandbox("sb1", 0, true)}})
	f.p.relists = newRelistClock()
	f.p.relists.completed(time.Now())
	var mu sync.Mutex
	var published []v1.PodStatus
	f.p.notify = func(p *v1.Pod) {
		mu.Lock()
		defer mu.Unlock()
		published = append(published, p.Status)
	}
	rec := f.add(pod)
	deleted := pod.DeepCopy()
	now, grace := metav1.Now(), int64(3)
	deleted.DeletionTimestamp, deleted.DeletionGracePeriodSeconds = &now, &grace
	f.p.requestDeletion(rec, deleted)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _, _ = f.p.syncPod(context.Background(), rec)
	}()
	// The worker stopped the sandbox, published the stopped status and waits for a relist that
	// began after it (the pod leaves the API, then the runtime, in that turn).
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		mu.Lock()
		n := len(published)
		mu.Unlock()
		return rec.lifecycleNow().state == podTerminated && n > 0, nil
	})
	if err != nil {
		t.Fatalf("the pod never reached its termination turn: %s", rec.lifecycleNow().state)
	}
	mu.Lock()
	before := append([]v1.PodStatus(nil), published...)
	mu.Unlock()
	if len(before) == 0 {
		t.Fatal("no status published while terminating")
	}
	last := before[len(before)-1]
	if last.Phase != v1.PodPending || conditionStatus(last, v1.PodReadyToStartContainers) != v1.ConditionFalse {
		t.Errorf("before its turn the pod shows %s with PodReadyToStartContainers %s, want Pending with False",
			last.Phase, conditionStatus(last, v1.PodReadyToStartContainers))
	}
	f.p.relists.completed(time.Now())
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the removal did not go on after the relist")
	}
	mu.Lock()
	defer mu.Unlock()
	if got := published[len(published)-1]; got.Phase != v1.PodFailed {
		t.Errorf("final status %s, want Failed", got.Phase)
	}
}

func conditionStatus(st v1.PodStatus, t v1.PodConditionType) v1.ConditionStatus {
	for _, c := range st.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return ""
}
