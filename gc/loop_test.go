package gc

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"k8s.io/apimachinery/pkg/util/wait"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

// failingLister fails its first n lists.
type failingLister struct {
	mu sync.Mutex
	n  int
	rt *fakeRuntime
}

func (f *failingLister) ListContainers(ctx context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n > 0 {
		f.n--
		return nil, errors.New("runtime busy")
	}
	return f.rt.ListContainers(ctx, filter)
}

func (r *fakeRecorder) reasons() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		out = append(out, e.reason)
	}
	return out
}

// The loop collects containers every minute (ContainerGCFailed on each failure) and images every
// 5 minutes (ImageGCFailed only from the second failure in a row), as the kubelet's
// StartGarbageCollection.
func TestLoopEvents(t *testing.T) {
	rt := newFakeRuntime()
	clock := clocktesting.NewFakeClock(t0)
	log := logrus.NewEntry(logrus.New())
	rec := &fakeRecorder{}
	lister := &failingLister{n: 2, rt: rt}
	images := NewImageGC(ImageGCConfig{Policy: DefaultImagePolicy(), NodeName: "n", Clock: clock},
		rt, lister, fakeFs{rt: rt, capacity: 1000 * mib}, rec, fakeCounter{}, log)
	containers := NewContainerGC(ContainerGCConfig{Policy: DefaultContainerPolicy(), Owner: owner, Clock: clock},
		&failingRuntime{fakeRuntime: rt, n: 1}, fakePods{}, log)
	l := &Loop{Containers: containers, Images: images, Recorder: rec, NodeName: "n", Clock: clock, Log: log}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l.Run(ctx)

	waitFor := func(what string, want []string) {
		t.Helper()
		err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
			got := rec.reasons()
			if len(got) != len(want) {
				return false, nil
			}
			counts := map[string]int{}
			for _, r := range got {
				counts[r]++
			}
			for _, r := range want {
				counts[r]--
			}
			for _, c := range counts {
				if c != 0 {
					return false, nil
				}
			}
			return true, nil
		})
		if err != nil {
			t.Fatalf("%s: events %v, want %v", what, rec.reasons(), want)
		}
	}
	// At start: the container pass fails (an event), the image pass fails once (none).
	waitFor("at start", []string{EventContainerGCFailed})
	// 5 minutes later image GC fails again, now with an event; the container pass succeeds.
	// The image pass's first run (its ticker is made before it) is over once it listed.
	err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		lister.mu.Lock()
		defer lister.mu.Unlock()
		return lister.n == 1, nil
	})
	if err != nil {
		t.Fatal("the first image pass never ran")
	}
	// One step of 5 minutes fires each ticker once.
	clock.Step(ImageGCPeriod)
	waitFor("after 5 minutes", []string{EventContainerGCFailed, EventImageGCFailed})
}

// failingRuntime fails its first n container lists.
type failingRuntime struct {
	*fakeRuntime
	mu sync.Mutex
	n  int
}

func (f *failingRuntime) ListContainers(ctx context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error) {
	f.mu.Lock()
	if f.n > 0 {
		f.n--
		f.mu.Unlock()
		return nil, errors.New("runtime busy")
	}
	f.mu.Unlock()
	return f.fakeRuntime.ListContainers(ctx, filter)
}
