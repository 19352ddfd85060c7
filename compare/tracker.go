package compare

import (
	"context"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// podTracker follows a namespace's pods through a watch: the latest object of each pod, its
// timeline of distinct normalised statuses and when it disappeared. Waiters are woken on every
// change.
type podTracker struct {
	mu      sync.Mutex
	names   map[string]bool // the scenario's pods; others are ignored
	pods    map[string]*trackedPod
	changed chan struct{}
	start   time.Time // what TimelineEntry.At counts from
	frozen  bool      // timelines no longer grow
	frozeAt time.Time // when they stopped growing
	errs    []string
}

type trackedPod struct {
	latest   *v1.Pod
	gone     bool
	goneAt   time.Time
	timeline []TimelineEntry
}

func newPodTracker(names []string) *podTracker {
	t := &podTracker{names: map[string]bool{}, pods: map[string]*trackedPod{}, changed: make(chan struct{}), start: time.Now()}
	for _, n := range names {
		t.names[n] = true
		t.pods[n] = &trackedPod{}
	}
	return t
}

// setStart sets the time the timeline's At values count from.
func (t *podTracker) setStart(at time.Time) {
	t.mu.Lock()
	t.start = at
	t.mu.Unlock()
}

// observe records one watch event.
func (t *podTracker) observe(ev watch.Event, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch ev.Type {
	case watch.Added, watch.Modified, watch.Deleted:
	case watch.Error:
		t.errs = append(t.errs, fmt.Sprintf("pod watch: %v", ev.Object))
		return
	default:
		return
	}
	pod, ok := ev.Object.(*v1.Pod)
	if !ok || !t.names[pod.Name] {
		return
	}
	tp := t.pods[pod.Name]
	tp.latest = pod
	if !t.frozen {
		snap := NormalizePod(pod)
		if n := len(tp.timeline); n == 0 || !tp.timeline[n-1].Equal(snap) {
			tp.timeline = append(tp.timeline, TimelineEntry{At: roundSeconds(now.Sub(t.start)), PodSnapshot: snap})
		}
	}
	if ev.Type == watch.Deleted && !tp.gone {
		tp.gone, tp.goneAt = true, now
	}
	close(t.changed)
	t.changed = make(chan struct{})
}

// freeze stops the timelines from growing.
func (t *podTracker) freeze() {
	t.mu.Lock()
	if !t.frozen {
		t.frozen, t.frozeAt = true, time.Now()
	}
	t.mu.Unlock()
}

// timelineWithDurations returns a copy of a pod's timeline with each state's visible time
// (stampDurations): the last state lasts until the pod left the API, or is open until the
// timelines were frozen (or until now when they were not).
func (t *podTracker) timelineWithDurations(name string) []TimelineEntry {
	t.mu.Lock()
	defer t.mu.Unlock()
	tp := t.pods[name]
	if tp == nil {
		return nil
	}
	end, open := t.frozeAt, true
	switch {
	case tp.gone && (!t.frozen || !tp.goneAt.After(t.frozeAt)):
		end, open = tp.goneAt, false
	case !t.frozen:
		end = time.Now()
	}
	return stampDurations(tp.timeline, roundSeconds(end.Sub(t.start)), open)
}

// snapshot returns a copy of what is known of a pod and a channel closed on the next change.
func (t *podTracker) snapshot(name string) (trackedPod, <-chan struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tp := t.pods[name]
	if tp == nil {
		return trackedPod{}, t.changed
	}
	cp := *tp
	cp.timeline = append([]TimelineEntry(nil), tp.timeline...)
	return cp, t.changed
}

// until waits for cond to hold on the pod; cond returns done, or a non-empty reason why it can
// never be done. It returns done, the reason, or ctx's error.
func (t *podTracker) until(ctx context.Context, name string, cond func(trackedPod) (bool, string)) (bool, string, error) {
	for {
		tp, changed := t.snapshot(name)
		if ok, why := cond(tp); ok || why != "" {
			return ok, why, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return false, "", ctx.Err()
		}
	}
}

func roundSeconds(d time.Duration) float64 {
	return float64(d.Round(time.Millisecond)) / float64(time.Second)
}

// eventTracker keeps the latest version of every event of a namespace.
type eventTracker struct {
	mu     sync.Mutex
	events map[string]*v1.Event // by UID
	last   time.Time            // when the watch last delivered something
}

func newEventTracker() *eventTracker { return &eventTracker{events: map[string]*v1.Event{}} }

func (t *eventTracker) observe(ev watch.Event) {
	e, ok := ev.Object.(*v1.Event)
	if !ok {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.last = time.Now()
	if ev.Type == watch.Deleted {
		return // an expired event still happened
	}
	t.put(e)
}

func (t *eventTracker) put(e *v1.Event) {
	if old, ok := t.events[string(e.UID)]; ok && eventCount(old) > eventCount(e) {
		return
	}
	t.events[string(e.UID)] = e
}

// lastSeen is when the watch last delivered an event.
func (t *eventTracker) lastSeen() time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.last
}

func (t *eventTracker) all() []*v1.Event {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]*v1.Event, 0, len(t.events))
	for _, e := range t.events {
		out = append(out, e)
	}
	return out
}

// eventCount is how many times an event occurred, whichever API wrote it.
func eventCount(e *v1.Event) int32 {
	n := e.Count
	if e.Series != nil && e.Series.Count > n {
		n = e.Series.Count
	}
	if n < 1 {
		n = 1
	}
	return n
}

// eventTime is when an event first occurred.
func eventTime(e *v1.Event) time.Time {
	switch {
	case !e.FirstTimestamp.IsZero():
		return e.FirstTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

// startWatches lists the namespace's pods and events and watches both from there, feeding the
// trackers until ctx ends. The returned channel is closed when both watches have stopped.
func startWatches(ctx context.Context, client kubernetes.Interface, ns string, pods *podTracker, events *eventTracker) (<-chan struct{}, error) {
	pl, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	el, err := client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing events: %w", err)
	}
	for i := range el.Items {
		events.put(&el.Items[i])
	}
	pw, err := watchtools.NewRetryWatcherWithContext(ctx, pl.ResourceVersion, &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return client.CoreV1().Pods(ns).Watch(ctx, o)
		},
	})
	if err != nil {
		return nil, fmt.Errorf("watching pods: %w", err)
	}
	ew, err := watchtools.NewRetryWatcherWithContext(ctx, el.ResourceVersion, &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return client.CoreV1().Events(ns).Watch(ctx, o)
		},
	})
	if err != nil {
		pw.Stop()
		return nil, fmt.Errorf("watching events: %w", err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		defer pw.Stop()
		for {
			select {
			case ev, ok := <-pw.ResultChan():
				if !ok {
					return
				}
				pods.observe(ev, time.Now())
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		defer ew.Stop()
		for {
			select {
			case ev, ok := <-ew.ResultChan():
				if !ok {
					return
				}
				events.observe(ev)
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() {
		wg.Wait()
		close(done)
	}()
	return done, nil
}
