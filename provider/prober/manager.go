package prober

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// StatusSource returns the pod's last reported status (read only), or false if there is none.
type StatusSource func(podUID types.UID) (*v1.PodStatus, bool)

// EventFunc records an event on one container of a pod.
type EventFunc func(pod *v1.Pod, container string, isInit bool, eventType, reason, message string)

// Option configures a Manager.
type Option func(*Manager)

// WithClock sets the clock (a fake one in tests).
func WithClock(c clock.WithTicker) Option { return func(m *Manager) { m.clock = c } }

// WithEvents sets where the Unhealthy and ProbeWarning events go.
func WithEvents(f EventFunc) Option { return func(m *Manager) { m.events = f } }

// WithUpdates sets the function called when a probe's verdict on a container changes, so that
// the pod's worker looks at the pod again.
func WithUpdates(f func(podUID types.UID, k Kind)) Option { return func(m *Manager) { m.onUpdate = f } }

// WithJitter sets how long a worker started soon after the manager waits before its first run,
// given the probe's period (a random part of it by default).
func WithJitter(f func(period time.Duration) time.Duration) Option {
	return func(m *Manager) { m.jitter = f }
}

// WithRestartPolicy sets whether a container that exited with a code will run again (the
// pod's and the container's restart policy and rules); a worker whose container will not stops.
func WithRestartPolicy(f func(c *v1.Container, pod *v1.Pod, exitCode int32) bool) Option {
	return func(m *Manager) { m.shouldRestart = f }
}

// WithExecCommand sets how an exec probe's command is prepared for its container (the kubelet
// expands $(VAR) references from the container's env as written in the spec).
func WithExecCommand(f func(c *v1.Container, cmd []string) []string) Option {
	return func(m *Manager) { m.execCommand = f }
}

// WithHTTPClient sets the client of httpGet probes.
func WithHTTPClient(c *HTTPClient) Option { return func(m *Manager) { m.http = c } }

// Manager runs the probes of every pod of the node and keeps their verdicts.
type Manager struct {
	ctx           context.Context
	clock         clock.WithTicker
	start         time.Time
	status        StatusSource
	execer        Execer
	http          *HTTPClient
	events        EventFunc
	onUpdate      func(types.UID, Kind)
	jitter        func(time.Duration) time.Duration
	shouldRestart func(c *v1.Container, pod *v1.Pod, exitCode int32) bool
	execCommand   func(c *v1.Container, cmd []string) []string

	liveness, readiness, startup *resultCache

	mu      sync.RWMutex
	workers map[probeKey]*worker
}

// NewManager returns a manager whose workers run until ctx ends. status gives the pods' last
// status (the container instances to probe, their start times, started flags and pod IPs);
// execer runs exec probes.
func NewManager(ctx context.Context, status StatusSource, execer Execer, opts ...Option) *Manager {
	m := &Manager{
		ctx:     ctx,
		clock:   clock.RealClock{},
		status:  status,
		execer:  execer,
		jitter:  func(p time.Duration) time.Duration { return time.Duration(rand.Float64() * float64(p)) },
		workers: map[probeKey]*worker{},
		shouldRestart: func(_ *v1.Container, pod *v1.Pod, _ int32) bool {
			return pod.Spec.RestartPolicy != v1.RestartPolicyNever
		},
	}
	for _, o := range opts {
		o(m)
	}
	if m.http == nil {
		m.http = NewHTTPClient()
	}
	m.start = m.clock.Now()
	changed := func(k Kind) func(podUID, containerID string) {
		return func(podUID, _ string) {
			if m.onUpdate != nil {
				m.onUpdate(types.UID(podUID), k)
			}
		}
	}
	m.liveness, m.readiness, m.startup = newResultCache(changed(Liveness)), newResultCache(changed(Readiness)), newResultCache(changed(Startup))
	return m
}

func (m *Manager) cache(k Kind) *resultCache {
	switch k {
	case Liveness:
		return m.liveness
	case Readiness:
		return m.readiness
	}
	return m.startup
}

// probedContainers are the containers whose probes run: regular containers and sidecars.
func probedContainers(pod *v1.Pod) []probedContainer {
	var out []probedContainer
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
			out = append(out, probedContainer{c: c, isInit: true})
		}
	}
	for i := range pod.Spec.Containers {
		out = append(out, probedContainer{c: &pod.Spec.Containers[i]})
	}
	return out
}

type probedContainer struct {
	c      *v1.Container
	isInit bool
}

func (pc probedContainer) probe(k Kind) *v1.Probe {
	switch k {
	case Liveness:
		return pc.c.LivenessProbe
	case Readiness:
		return pc.c.ReadinessProbe
	}
	return pc.c.StartupProbe
}

// AddPod starts a worker for each probe of the pod's containers and sidecars that has none.
// Probes cannot change in a pod's spec, so calling it again for the same pod is cheap and
// changes nothing.
func (m *Manager) AddPod(pod *v1.Pod) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, pc := range probedContainers(pod) {
		for _, k := range [...]Kind{Startup, Readiness, Liveness} {
			spec := pc.probe(k)
			if spec == nil {
				continue
			}
			key := probeKey{podUID: string(pod.UID), container: pc.c.Name, kind: k}
			if _, ok := m.workers[key]; ok {
				continue
			}
			w := &worker{
				m: m, key: key, kind: k, pod: pod, container: *pc.c, isInit: pc.isInit, sidecar: pc.isInit,
				spec: spec, results: m.cache(k),
				stopCh: make(chan struct{}, 1), triggerCh: make(chan struct{}, 1),
			}
			m.workers[key] = w
			go w.run(m.ctx)
		}
	}
}

// StopLivenessAndStartup stops the liveness and startup probes of a pod being terminated:
// nothing restarts its containers any more. Readiness keeps being probed until RemovePod.
func (m *Manager) StopLivenessAndStartup(uid types.UID) {
	m.stop(uid, Liveness, Startup)
}

// RemovePod stops every probe of the pod.
func (m *Manager) RemovePod(uid types.UID) {
	m.stop(uid, Liveness, Readiness, Startup)
}

func (m *Manager) stop(uid types.UID, kinds ...Kind) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for key, w := range m.workers {
		if key.podUID != string(uid) {
			continue
		}
		for _, k := range kinds {
			if key.kind == k {
				w.stop()
			}
		}
	}
}

func (m *Manager) removeWorker(key probeKey, w *worker) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.workers[key] == w {
		delete(m.workers, key)
	}
}

func (m *Manager) worker(uid types.UID, container string, k Kind) (*worker, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	w, ok := m.workers[probeKey{podUID: string(uid), container: container, kind: k}]
	return w, ok
}

// WorkerCount is the number of probe workers running.
func (m *Manager) WorkerCount() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.workers)
}

// Result returns a probe's verdict on a container instance (its runtime ID, without the
// "<runtime>://" prefix), and whether there is one.
func (m *Manager) Result(k Kind, containerID string) (Result, bool) {
	return m.cache(k).get(runtimeID(containerID))
}
