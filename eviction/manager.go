package eviction

import (
	"context"
	"sort"
	"time"

	"sync"

	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/clock"
)

// The kubelet's eviction manager defaults.
const (
	DefaultMonitoringInterval       = 10 * time.Second
	DefaultPressureTransitionPeriod = 5 * time.Minute
	// hardEvictionGrace is the grace period of a pod evicted by a hard threshold.
	hardEvictionGrace = 1
)

// Summarizer measures the node.
type Summarizer interface {
	Summary(ctx context.Context) (*statsapi.Summary, error)
}

// Evictor ends a pod: Failed, reason Evicted, message and condition (the provider's pod worker).
type Evictor interface {
	EvictPod(pod *v1.Pod, message string, condition v1.PodCondition, grace int64) bool
}

// Recorder records events (client-go's record.EventRecorder has it).
type Recorder interface {
	Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...any)
}

// Reclaimer frees node-level resources before pods are evicted for disk pressure (package gc):
// the kubelet's containerGC.DeleteAllUnusedContainers and imageGC.DeleteUnusedImages.
type Reclaimer interface {
	DeleteAllUnusedContainers(ctx context.Context) error
	DeleteUnusedImages(ctx context.Context) error
}

// Options configure the manager.
type Options struct {
	Thresholds               []Threshold
	PressureTransitionPeriod time.Duration
	MonitoringInterval       time.Duration
	// MaxPodGracePeriodSeconds caps the grace period of a pod evicted for a soft threshold
	// (--eviction-max-pod-grace-period; the kubelet's default 0 gives the 1 s minimum).
	MaxPodGracePeriodSeconds int64
	// DedicatedImageFs: the runtime's image file system is not the node's. A container's
	// writable layer then does not count against its ephemeral-storage limit.
	DedicatedImageFs bool
	// Reclaim, when set, frees disk space before pods are evicted for disk pressure.
	Reclaim Reclaimer
	// Recorder, when set, records the node's EvictionThresholdMet events; NodeName names the node.
	Recorder Recorder
	NodeName string
	// Capacity is the node's declared capacity (--capacity), nil for the host's: memory and
	// nodefs signals are then measured against it.
	Capacity v1.ResourceList
	// Clock is the real clock unless set (tests).
	Clock clock.PassiveClock
}

// Manager watches the eviction signals, keeps the pressure conditions and evicts.
type Manager struct {
	opts    Options
	stats   Summarizer
	pods    func() []*v1.Pod
	evictor Evictor
	log     *logrus.Entry

	mu    sync.Mutex
	state state
}

// state is what the manager carries from one round to the next.
type state struct {
	// lastObserved is when each pressure condition's signal was last seen crossed.
	lastObserved map[v1.NodeConditionType]time.Time
	// firstObserved is when each threshold met now was first seen met (for grace periods).
	firstObserved map[string]time.Time
	// met are the thresholds met last round, grace periods satisfied: they stay met until
	// their minimum reclaim is back.
	met []Threshold
	// pressure is which conditions are True.
	pressure map[v1.NodeConditionType]bool
}

// NewManager builds a manager; Run starts it.
func NewManager(opts Options, stats Summarizer, pods func() []*v1.Pod, evictor Evictor, log *logrus.Entry) *Manager {
	if opts.MonitoringInterval <= 0 {
		opts.MonitoringInterval = DefaultMonitoringInterval
	}
	if opts.PressureTransitionPeriod < 0 {
		opts.PressureTransitionPeriod = 0
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	return &Manager{opts: opts, stats: stats, pods: pods, evictor: evictor, log: log}
}

// SetReclaimer sets the node-level reclaim, built after the manager (it needs the provider).
func (m *Manager) SetReclaimer(r Reclaimer) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.opts.Reclaim = r
}

// Pressure reports which pressure conditions are True now.
func (m *Manager) Pressure() map[v1.NodeConditionType]bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[v1.NodeConditionType]bool, len(m.state.pressure))
	for k, v := range m.state.pressure {
		out[k] = v
	}
	return out
}

// Run checks the signals every monitoring interval until ctx ends.
func (m *Manager) Run(ctx context.Context) {
	t := time.NewTicker(m.opts.MonitoringInterval)
	defer t.Stop()
	for {
		m.synchronize(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// synchronize is one round of the kubelet's eviction manager: observe, update the pressure
// conditions, evict pods over their own local storage limits, then for the most urgent
// threshold met (grace period satisfied): reclaim node-level resources, and only if that was
// not enough, evict one pod.
func (m *Manager) synchronize(ctx context.Context) {
	active := activePods(m.pods())
	if len(m.opts.Thresholds) == 0 && !hasLocalStorageLimit(active) {
		return
	}
	summary, err := m.measure(ctx)
	if err != nil {
		m.log.WithError(err).Warn("eviction manager: cannot measure the node")
		return
	}
	m.mu.Lock()
	d := decide(m.opts.Clock.Now(), m.opts, summary, active, m.state)
	m.state = d.state
	reclaim := m.opts.Reclaim
	m.mu.Unlock()

	// As the kubelet, pods over their own limits (emptyDir sizeLimit, pod and container
	// ephemeral-storage limits) go first, without a DisruptionTarget condition; the thresholds
	// are looked at in the next round.
	if over := localStorageOverLimit(active, summary, m.opts.DedicatedImageFs); len(over) > 0 {
		evicted := false
		for _, c := range over {
			if m.evictor.EvictPod(c.pod, c.message, v1.PodCondition{}, hardEvictionGrace) {
				m.log.WithFields(logrus.Fields{"pod": c.pod.Namespace + "/" + c.pod.Name, "message": c.message}).Info("eviction manager: pod evicted")
				evicted = true
			}
		}
		if evicted {
			return
		}
	}
	if d.threshold == nil {
		return
	}
	res := resourceOf(d.threshold.Signal)
	log := m.log.WithFields(logrus.Fields{"threshold": d.threshold.String(), "resource": res})
	if m.opts.Recorder != nil {
		// The kubelet's nodeRef: kind Node, the node's name as its UID.
		node := &v1.ObjectReference{Kind: "Node", Name: m.opts.NodeName, UID: types.UID(m.opts.NodeName)}
		m.opts.Recorder.Eventf(node, v1.EventTypeWarning, "EvictionThresholdMet", "Attempting to reclaim %s", res)
	}
	if reclaim != nil && reclaimsNodeLevel(d.threshold.Signal) {
		log.Info("eviction manager: attempting to reclaim")
		if m.reclaimed(ctx, reclaim, log) {
			log.Info("eviction manager: able to reduce resource pressure without evicting pods")
			return
		}
	}
	log.Info("eviction manager: must evict pod(s) to reclaim")
	for _, c := range d.candidates {
		cond := v1.PodCondition{
			Type:    v1.DisruptionTarget,
			Status:  v1.ConditionTrue,
			Reason:  v1.PodReasonTerminationByKubelet,
			Message: c.message,
		}
		if isCritical(c.pod) {
			m.log.WithField("pod", c.pod.Namespace+"/"+c.pod.Name).Warn("eviction manager: cannot evict a critical pod")
			continue
		}
		if m.evictor.EvictPod(c.pod, c.message, cond, c.grace) {
			m.log.WithField("pod", c.pod.Namespace+"/"+c.pod.Name).Info("eviction manager: pod evicted")
			return
		}
	}
	m.log.Warn("eviction manager: no pod could be evicted")
}

func (m *Manager) measure(ctx context.Context) (*statsapi.Summary, error) {
	sctx, cancel := context.WithTimeout(ctx, m.opts.MonitoringInterval*3)
	defer cancel()
	return m.stats.Summary(sctx)
}

// reclaimsNodeLevel: disk signals are relieved by removing dead containers, then unused images
// (the kubelet's buildSignalToNodeReclaimFuncs on a node without a separate image file system).
func reclaimsNodeLevel(s Signal) bool {
	switch s {
	case NodeFsAvailable, NodeFsInodesFree, ImageFsAvailable, ImageFsInodesFree:
		return true
	}
	return false
}

// reclaimed removes dead containers, then unused images, measures again and reports whether no
// threshold is met any more, minimum reclaim included (reclaimNodeLevelResources).
func (m *Manager) reclaimed(ctx context.Context, r Reclaimer, log *logrus.Entry) bool {
	if err := r.DeleteAllUnusedContainers(ctx); err != nil {
		log.WithError(err).Warn("eviction manager: removing dead containers")
	}
	if err := r.DeleteUnusedImages(ctx); err != nil {
		log.WithError(err).Warn("eviction manager: removing unused images")
	}
	summary, err := m.measure(ctx)
	if err != nil {
		log.WithError(err).Warn("eviction manager: cannot measure the node after reclaim")
		return false
	}
	return len(crossed(m.opts.Thresholds, observe(summary, m.opts.Capacity), true)) == 0
}

// activePods are the pods that still run: not finished, not being deleted.
func activePods(pods []*v1.Pod) []*v1.Pod {
	var out []*v1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp != nil || p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
			continue
		}
		out = append(out, p)
	}
	return out
}

type candidate struct {
	pod     *v1.Pod
	message string
	grace   int64
}

// decision is what one look at the signals concludes.
type decision struct {
	state state
	// threshold is the crossed threshold to reclaim, nil when none is.
	threshold *Threshold
	// candidates are the pods to evict, in order; the first that can be evicted is.
	candidates []candidate
}

// signalOrder is the order in which crossed thresholds are reclaimed: memory first.
var signalOrder = map[Signal]int{MemoryAvailable: 0, NodeFsAvailable: 1, NodeFsInodesFree: 2,
	ImageFsAvailable: 3, ImageFsInodesFree: 4, PIDAvailable: 5}

// decide computes, as the kubelet's synchronize: the thresholds met (those met last round stay
// met until their minimum reclaim is back), the pressure conditions (as soon as a threshold is
// met, soft or hard; True for the pressure transition period after), and, among the thresholds
// met for at least their grace period, the one to reclaim with the ranked pods and their grace
// periods: 1 s for a hard threshold, for a soft one the pod's own capped by
// --eviction-max-pod-grace-period.
func decide(now time.Time, opts Options, summary *statsapi.Summary, pods []*v1.Pod, prev state) decision {
	obs := observe(summary, opts.Capacity)
	met := crossed(opts.Thresholds, obs, false)
	if len(prev.met) > 0 {
		for _, t := range crossed(prev.met, obs, true) {
			if !hasThreshold(met, t) {
				met = append(met, t)
			}
		}
	}
	d := decision{state: state{pressure: map[v1.NodeConditionType]bool{},
		lastObserved: map[v1.NodeConditionType]time.Time{}, firstObserved: map[string]time.Time{}}}
	for k, v := range prev.lastObserved {
		d.state.lastObserved[k] = v
	}
	for _, t := range met {
		d.state.lastObserved[conditionOf(t.Signal)] = now
		at, ok := prev.firstObserved[t.key()]
		if !ok {
			at = now
		}
		d.state.firstObserved[t.key()] = at
	}
	for cond, at := range d.state.lastObserved {
		if now.Sub(at) < opts.PressureTransitionPeriod || at.Equal(now) {
			d.state.pressure[cond] = true
		} else {
			delete(d.state.lastObserved, cond)
		}
	}
	var graced []Threshold
	for _, t := range met {
		if now.Sub(d.state.firstObserved[t.key()]) >= t.GracePeriod {
			graced = append(graced, t)
		}
	}
	d.state.met = graced
	if len(graced) == 0 {
		return d
	}
	sort.SliceStable(graced, func(i, j int) bool { return signalOrder[graced[i].Signal] < signalOrder[graced[j].Signal] })
	t := graced[0]
	d.threshold = &t
	stats := map[string]*statsapi.PodStats{}
	for i := range summary.Pods {
		stats[summary.Pods[i].PodRef.UID] = &summary.Pods[i]
	}
	ranked := append([]*v1.Pod(nil), pods...)
	rank(ranked, stats, t.Signal)
	for _, p := range ranked {
		d.candidates = append(d.candidates, candidate{pod: p, grace: evictionGrace(t, p, opts.MaxPodGracePeriodSeconds),
			message: evictionMessage(resourceOf(t.Signal), p, stats[string(p.UID)], t, obs[t.Signal])})
	}
	return d
}

// evictionGrace is an evicted pod's grace period: the minimum for a hard threshold; for a soft
// one the pod's terminationGracePeriodSeconds capped by the maximum (the kubelet's
// gracePeriodOverride).
func evictionGrace(t Threshold, pod *v1.Pod, maxGrace int64) int64 {
	if t.Hard() {
		return hardEvictionGrace
	}
	g := maxGrace
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		g = min(maxGrace, *pod.Spec.TerminationGracePeriodSeconds)
	}
	return max(g, hardEvictionGrace)
}

func hasThreshold(ts []Threshold, t Threshold) bool {
	for _, x := range ts {
		if x.key() == t.key() {
			return true
		}
	}
	return false
}
