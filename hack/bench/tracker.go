// The watch tracker: every pod event of one namespace, with the client's receive time.

package main

import (
	"context"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

type podRec struct {
	createSent time.Time
	created    time.Time // the Create call returned
	added      time.Time // first event seen
	running    time.Time
	ready      time.Time
	failed     time.Time
	deleteSent time.Time
	deleted    time.Time
	ip         string
}

// t0 is the pod's creation as the client knows it: the earlier of the Create call returning and
// its first watch event.
func (r *podRec) t0() time.Time {
	switch {
	case r.created.IsZero():
		return r.added
	case r.added.IsZero() || r.created.Before(r.added):
		return r.created
	}
	return r.added
}

type tracker struct {
	mu      sync.Mutex
	pods    map[string]*podRec
	changed chan struct{}
}

func newTracker() *tracker {
	return &tracker{pods: map[string]*podRec{}, changed: make(chan struct{})}
}

// rec returns the record of a pod, creating it; the caller holds t.mu.
func (t *tracker) rec(name string) *podRec {
	r := t.pods[name]
	if r == nil {
		r = &podRec{}
		t.pods[name] = r
	}
	return r
}

func (t *tracker) update(name string, f func(r *podRec)) {
	t.mu.Lock()
	f(t.rec(name))
	t.mu.Unlock()
}

func (t *tracker) get(name string) podRec {
	t.mu.Lock()
	defer t.mu.Unlock()
	return *t.rec(name)
}

func (t *tracker) observe(typ watch.EventType, pod *v1.Pod, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.rec(pod.Name)
	if r.added.IsZero() {
		r.added = now
	}
	if typ == watch.Deleted && r.deleted.IsZero() {
		r.deleted = now
	}
	if pod.Status.PodIP != "" {
		r.ip = pod.Status.PodIP
	}
	switch pod.Status.Phase {
	case v1.PodRunning:
		if r.running.IsZero() {
			r.running = now
		}
	case v1.PodFailed:
		if r.failed.IsZero() {
			r.failed = now
		}
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.PodReady && c.Status == v1.ConditionTrue && r.ready.IsZero() {
			r.ready = now
		}
	}
	close(t.changed)
	t.changed = make(chan struct{})
}

// wait returns true once cond (called with t.mu held) holds, false at the timeout or when ctx ends.
func (t *tracker) wait(ctx context.Context, timeout time.Duration, cond func(pods map[string]*podRec) bool) bool {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		t.mu.Lock()
		ok := cond(t.pods)
		ch := t.changed
		t.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-ch:
		case <-timer.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// count returns how many of names satisfy f; the caller holds t.mu (inside wait's cond).
func count(pods map[string]*podRec, names []string, f func(r *podRec) bool) int {
	n := 0
	for _, name := range names {
		if r := pods[name]; r != nil && f(r) {
			n++
		}
	}
	return n
}

func (t *tracker) countNow(names []string, f func(r *podRec) bool) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return count(t.pods, names, f)
}

// run watches the namespace's pods until ctx ends, restarting the watch if it breaks.
func (t *tracker) run(ctx context.Context, kube kubernetes.Interface, ns string, ready chan<- error) {
	first := true
	for ctx.Err() == nil {
		list, err := kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			if first {
				ready <- err
				return
			}
			time.Sleep(time.Second)
			continue
		}
		now := time.Now()
		for i := range list.Items {
			// Only after a broken watch: the state is recorded late, never early.
			t.observe(watch.Modified, &list.Items[i], now)
		}
		lw := &cache.ListWatch{WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return kube.CoreV1().Pods(ns).Watch(ctx, opts)
		}}
		rw, err := watchtools.NewRetryWatcherWithContext(ctx, list.ResourceVersion, lw)
		if err != nil {
			if first {
				ready <- err
				return
			}
			continue
		}
		if first {
			ready <- nil
			first = false
		}
	events:
		for {
			select {
			case <-ctx.Done():
				rw.Stop()
				return
			case ev, ok := <-rw.ResultChan():
				now := time.Now()
				if !ok {
					break events
				}
				if pod, isPod := ev.Object.(*v1.Pod); isPod && ev.Type != watch.Bookmark {
					t.observe(ev.Type, pod, now)
				}
			}
		}
		rw.Stop()
		logf("watch on %s ended; listing and watching again", ns)
	}
}
