package provider

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"
)

// turnVolumes records, when the pod's volumes are torn down, when the last listing of the
// runtime that completed by then had started.
type turnVolumes struct {
	fakeVolumes
	clock      *relistClock
	mu         sync.Mutex
	listedThen time.Time
}

func (v *turnVolumes) TearDown(uid types.UID) error {
	v.mu.Lock()
	v.listedThen = v.clock.last()
	v.mu.Unlock()
	return v.fakeVolumes.TearDown(uid)
}

// A deleted pod's terminal status is set when its containers have stopped (SyncTerminatingPod's
// end); its volumes are torn down and it leaves the API only in the terminated sync's turn, once
// the runtime was listed after that: the status stays visible meanwhile, as on the kubelet.
func TestDeletedPodTearsDownInTheTerminatedSyncsTurn(t *testing.T) {
	pod := terminationPod()
	f := newWorkerFixture(t, pod, runningState(pod))
	clock := newRelistClock()
	f.p.relists = clock
	vols := &turnVolumes{clock: clock}
	f.p.cfg.Volumes = vols
	var mu sync.Mutex
	var terminalAt time.Time
	f.p.notify = func(p *v1.Pod) {
		mu.Lock()
		defer mu.Unlock()
		if isTerminalPhase(p.Status.Phase) && terminalAt.IsZero() {
			terminalAt = time.Now()
		}
	}
	rec := f.add(pod)
	deleted := terminationPod()
	now, grace := metav1.Now(), int64(10)
	deleted.DeletionTimestamp, deleted.DeletionGracePeriodSeconds = &now, &grace
	f.p.requestDeletion(rec, deleted)

	done := make(chan error, 1)
	go func() {
		_, _, err := f.p.syncPod(context.Background(), rec)
		done <- err
	}()
	// The relister goes on listing until the pod is gone.
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(30 * time.Second)
	for finished := false; !finished; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("syncPod: %v", err)
			}
			finished = true
		case <-tick.C:
			clock.completed(time.Now())
		case <-deadline:
			t.Fatal("the deleted pod was not removed")
		}
	}
	mu.Lock()
	defer mu.Unlock()
	vols.mu.Lock()
	defer vols.mu.Unlock()
	if terminalAt.IsZero() {
		t.Fatal("no terminal status was published")
	}
	if vols.listedThen.Before(terminalAt) {
		t.Errorf("volumes torn down after a listing that started at %v, before the terminal status (%v)", vols.listedThen, terminalAt)
	}
	if _, deletedFromAPI := f.finalStatusInAPI(t); !deletedFromAPI {
		t.Error("the pod was not deleted from the API")
	}
}

// A deleted pod leaves the API before its containers and sandboxes are removed from the runtime,
// as on the kubelet (its status manager deletes the pod once SyncTerminatedPod is done; the
// container deletor and GC remove the dead containers later). A removal that fails is tried
// again without writing the API twice.
func TestDeletedPodLeavesTheAPIBeforeTheRuntimeRemovals(t *testing.T) {
	pod := terminationPod()
	f := newWorkerFixture(t, pod, runningState(pod))
	f.runtime.failRemoveContainer = errors.New("the runtime is busy")
	var mu sync.Mutex
	var heldAtDelete int
	deletes := 0
	f.api.PrependReactor("delete", "pods", func(clienttesting.Action) (bool, runtime.Object, error) {
		f.runtime.mu.Lock()
		n := len(f.runtime.state.Containers) + len(f.runtime.state.Sandboxes)
		f.runtime.mu.Unlock()
		mu.Lock()
		heldAtDelete, deletes = n, deletes+1
		mu.Unlock()
		return false, nil, nil
	})
	rec := f.add(pod)
	deleted := terminationPod()
	now, grace := metav1.Now(), int64(10)
	deleted.DeletionTimestamp, deleted.DeletionGracePeriodSeconds = &now, &grace
	f.p.requestDeletion(rec, deleted)

	if _, gone, err := f.p.syncPod(context.Background(), rec); err == nil || gone {
		t.Fatalf("syncPod with a failing RemoveContainer: gone %v, err %v; want the error", gone, err)
	}
	if l := rec.lifecycleNow(); l.state != podTerminated {
		t.Fatalf("after the failed removal: %s, want still terminated", l.state)
	}
	if _, gone := f.sync(t, rec); !gone {
		t.Fatal("the retry did not remove the pod")
	}
	mu.Lock()
	defer mu.Unlock()
	if deletes != 1 {
		t.Errorf("the pod was deleted from the API %d times, want once", deletes)
	}
	if heldAtDelete != 2 {
		t.Errorf("the runtime held %d of the pod's objects when it left the API, want its container and sandbox still", heldAtDelete)
	}
	rt, _ := f.runtime.inspectPod(context.Background(), testPodUID)
	if len(rt.Containers)+len(rt.Sandboxes) != 0 {
		t.Errorf("the runtime still holds %d containers, %d sandboxes", len(rt.Containers), len(rt.Sandboxes))
	}
}
