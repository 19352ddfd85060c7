package prober

import (
	"context"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
)

// restartGrace: a container that was running this long before the manager started was running
// before vk-cri restarted; its probes resume from the status the API holds, without resetting it.
const restartGrace = 10 * time.Second

// probeKey names one worker.
type probeKey struct {
	podUID    string
	container string
	kind      Kind
}

// worker runs one probe of one container, for every instance of that container, until stopped
// or the pod finishes. It never blocks anything but itself: a hanging action only delays its
// own next run.
type worker struct {
	m         *Manager
	key       probeKey
	kind      Kind
	pod       *v1.Pod
	container v1.Container
	isInit    bool
	sidecar   bool
	spec      *v1.Probe
	results   *resultCache

	stopCh    chan struct{}
	triggerCh chan struct{}

	// State of the container instance being probed.
	containerID string
	lastResult  Result
	resultRun   int
	// onHold stops probing an instance whose verdict is final (liveness failed, startup decided)
	// until a new instance appears.
	onHold bool
}

func (w *worker) period() time.Duration {
	if w.spec.PeriodSeconds <= 0 {
		return 10 * time.Second
	}
	return time.Duration(w.spec.PeriodSeconds) * time.Second
}

func (w *worker) stop() {
	select {
	case w.stopCh <- struct{}{}:
	default:
	}
}

// trigger asks for a run now (a container that is not ready yet), without blocking.
func (w *worker) trigger() {
	select {
	case w.triggerCh <- struct{}{}:
	default:
	}
}

func (w *worker) run(ctx context.Context) {
	period := w.period()
	defer func() {
		if w.containerID != "" {
			w.results.remove(w.containerID)
		}
		w.m.removeWorker(w.key, w)
	}()
	// Right after a start every pod's workers begin at once; spread them over a period.
	if period > w.m.clock.Since(w.m.start) {
		select {
		case <-w.m.clock.After(w.m.jitter(period)):
		case <-w.stopCh:
			return
		case <-ctx.Done():
			return
		}
	}
	ticker := w.m.clock.NewTicker(period)
	defer func() { ticker.Stop() }()
	for w.doProbe(ctx) {
		select {
		case <-w.stopCh:
			return
		case <-ctx.Done():
			return
		case <-ticker.C():
		case <-w.triggerCh:
			ticker.Stop()
			ticker = w.m.clock.NewTicker(period)
		}
	}
}

// doProbe runs the probe once if the container is in a state to be probed, and records the
// verdict once a threshold is reached. It reports whether the worker should keep going.
func (w *worker) doProbe(ctx context.Context) bool {
	status, ok := w.m.status(w.pod.UID)
	if !ok || status == nil {
		return true
	}
	if status.Phase == v1.PodSucceeded || status.Phase == v1.PodFailed {
		return false
	}
	c, ok := findStatus(status, w.container.Name)
	if !ok {
		return true
	}
	id := runtimeID(c.ContainerID)
	if id != w.containerID {
		w.newInstance(id, c)
	}
	if w.onHold {
		return true
	}
	if c.State.Running == nil {
		w.results.set(string(w.pod.UID), w.containerID, Failure)
		if c.State.Terminated == nil {
			return true
		}
		// Keep going only if another instance will come.
		return w.sidecar || w.m.shouldRestart(&w.container, w.pod, c.State.Terminated.ExitCode)
	}
	if int32(w.m.clock.Since(c.State.Running.StartedAt.Time).Seconds()) < w.spec.InitialDelaySeconds {
		return true
	}
	started := c.Started != nil && *c.Started
	if started == (w.kind == Startup) {
		// A startup probe is done once started; the others wait for it.
		return true
	}
	result, err := w.m.probe(ctx, w.kind, w.spec, target{pod: w.pod, container: &w.container, isInit: w.isInit, containerID: w.containerID, podIP: status.PodIP})
	if err != nil {
		return true
	}
	if result == w.lastResult {
		w.resultRun++
	} else {
		w.lastResult, w.resultRun = result, 1
	}
	if (result == Failure && w.resultRun < threshold(w.spec.FailureThreshold)) ||
		(result == Success && w.resultRun < threshold(w.spec.SuccessThreshold)) {
		return true
	}
	w.results.set(string(w.pod.UID), w.containerID, result)
	if (w.kind == Liveness && result == Failure) || w.kind == Startup {
		w.onHold, w.resultRun = true, 0
	}
	return true
}

// newInstance switches the worker to a new container instance. Its result starts at the
// kind's initial value, except for an instance that ran before vk-cri restarted: that one keeps
// what the API's status says until its probe decides otherwise, so a restart of vk-cri never
// kills a container or flips a pod to not ready by itself.
func (w *worker) newInstance(id string, c *v1.ContainerStatus) {
	if w.containerID != "" {
		w.results.remove(w.containerID)
	}
	w.containerID = id
	ranBefore := false
	if c.State.Running != nil {
		startedAt := c.State.Running.StartedAt.Time
		ranBefore = !startedAt.IsZero() && startedAt.Before(w.m.start.Add(-restartGrace))
	}
	if w.sidecar && w.kind == Startup && c.Started != nil && *c.Started {
		w.results.set(string(w.pod.UID), id, Success)
	}
	if !ranBefore {
		w.results.set(string(w.pod.UID), id, w.kind.initial())
	}
	w.onHold = false
}

func threshold(n int32) int {
	if n <= 0 {
		return 1
	}
	return int(n)
}

// findStatus finds the status of a container that has an instance, regular or init.
func findStatus(s *v1.PodStatus, name string) (*v1.ContainerStatus, bool) {
	for _, list := range [][]v1.ContainerStatus{s.ContainerStatuses, s.InitContainerStatuses} {
		for i := range list {
			if list[i].Name == name && list[i].ContainerID != "" {
				return &list[i], true
			}
		}
	}
	return nil, false
}

// runtimeID strips the "<runtime>://" prefix of a status's container ID.
func runtimeID(containerID string) string {
	if i := strings.Index(containerID, "://"); i >= 0 {
		return containerID[i+3:]
	}
	return containerID
}
