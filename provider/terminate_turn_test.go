package provider

import (
	"context"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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
