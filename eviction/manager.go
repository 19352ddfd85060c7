package eviction

import (
	"context"
	"sort"
	"time"

	"sync"

	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
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

// Options configure the manager.
type Options struct {
	Thresholds               []Threshold
	PressureTransitionPeriod time.Duration
	MonitoringInterval       time.Duration
}

// Manager watches the eviction signals, keeps the pressure conditions and evicts.
type Manager struct {
	opts    Options
	stats   Summarizer
	pods    func() []*v1.Pod
	evictor Evictor
	log     *logrus.Entry

	mu           sync.Mutex
	lastObserved map[v1.NodeConditionType]time.Time
	pressure     map[v1.NodeConditionType]bool
}

// NewManager builds a manager; Run starts it.
func NewManager(opts Options, stats Summarizer, pods func() []*v1.Pod, evictor Evictor, log *logrus.Entry) *Manager {
	if opts.MonitoringInterval <= 0 {
		opts.MonitoringInterval = DefaultMonitoringInterval
	}
	if opts.PressureTransitionPeriod < 0 {
		opts.PressureTransitionPeriod = 0
	}
	return &Manager{opts: opts, stats: stats, pods: pods, evictor: evictor, log: log,
		lastObserved: map[v1.NodeConditionType]time.Time{}, pressure: map[v1.NodeConditionType]bool{}}
}

// Pressure reports which pressure conditions are True now.
func (m *Manager) Pressure() map[v1.NodeConditionType]bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[v1.NodeConditionType]bool, len(m.pressure))
	for k, v := range m.pressure {
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

func (m *Manager) synchronize(ctx context.Context) {
	active := activePods(m.pods())
	if len(m.opts.Thresholds) == 0 && !hasEmptyDirLimit(active) {
		return
	}
	sctx, cancel := context.WithTimeout(ctx, m.opts.MonitoringInterval*3)
	defer cancel()
	summary, err := m.stats.Summary(sctx)
	if err != nil {
		m.log.WithError(err).Warn("eviction manager: cannot measure the node")
		return
	}
	// As the kubelet, pods over their emptyDir sizeLimit go first, without a DisruptionTarget
	// condition; the thresholds are looked at in the next round.
	if over := emptyDirOverLimit(active, summary); len(over) > 0 {
		for _, c := range over {
			if m.evictor.EvictPod(c.pod, c.message, v1.PodCondition{}, hardEvictionGrace) {
				m.log.WithFields(logrus.Fields{"pod": c.pod.Namespace + "/" + c.pod.Name, "message": c.message}).Info("eviction manager: pod evicted")
			}
		}
		return
	}
	if len(m.opts.Thresholds) == 0 {
		return
	}
	now := time.Now()
	m.mu.Lock()
	d := decide(now, m.opts, summary, active, m.lastObserved)
	m.lastObserved, m.pressure = d.lastObserved, d.pressure
	m.mu.Unlock()
	if d.threshold == nil {
		return
	}
	m.log.WithFields(logrus.Fields{"threshold": d.threshold.String(), "resource": resourceOf(d.threshold.Signal)}).Info("eviction manager: threshold crossed, must evict a pod")
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
		if m.evictor.EvictPod(c.pod, c.message, cond, hardEvictionGrace) {
			m.log.WithField("pod", c.pod.Namespace+"/"+c.pod.Name).Info("eviction manager: pod evicted")
			return
		}
	}
	m.log.Warn("eviction manager: no pod could be evicted")
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
}

// decision is what one look at the signals concludes.
type decision struct {
	pressure     map[v1.NodeConditionType]bool
	lastObserved map[v1.NodeConditionType]time.Time
	// threshold is the crossed threshold to reclaim, nil when none is.
	threshold *Threshold
	// candidates are the pods to evict, in order; the first that can be evicted is.
	candidates []candidate
}

// signalOrder is the order in which crossed thresholds are reclaimed: memory first.
var signalOrder = map[Signal]int{MemoryAvailable: 0, NodeFsAvailable: 1, NodeFsInodesFree: 2,
	ImageFsAvailable: 3, ImageFsInodesFree: 4, PIDAvailable: 5}

// decide computes the pressure conditions and, when a threshold is crossed, the ranked pods.
// A condition stays True for the pressure transition period after its signal recovered.
func decide(now time.Time, opts Options, summary *statsapi.Summary, pods []*v1.Pod, lastObserved map[v1.NodeConditionType]time.Time) decision {
	obs := observe(summary)
	met := crossed(opts.Thresholds, obs)
	d := decision{pressure: map[v1.NodeConditionType]bool{}, lastObserved: map[v1.NodeConditionType]time.Time{}}
	for k, v := range lastObserved {
		d.lastObserved[k] = v
	}
	for _, t := range met {
		d.lastObserved[conditionOf(t.Signal)] = now
	}
	for cond, at := range d.lastObserved {
		if now.Sub(at) < opts.PressureTransitionPeriod || at.Equal(now) {
			d.pressure[cond] = true
		} else {
			delete(d.lastObserved, cond)
		}
	}
	if len(met) == 0 {
		return d
	}
	sort.SliceStable(met, func(i, j int) bool { return signalOrder[met[i].Signal] < signalOrder[met[j].Signal] })
	t := met[0]
	d.threshold = &t
	stats := map[string]*statsapi.PodStats{}
	for i := range summary.Pods {
		stats[summary.Pods[i].PodRef.UID] = &summary.Pods[i]
	}
	ranked := append([]*v1.Pod(nil), pods...)
	rank(ranked, stats, t.Signal)
	for _, p := range ranked {
		d.candidates = append(d.candidates, candidate{pod: p, message: evictionMessage(resourceOf(t.Signal), p, stats[string(p.UID)], t, obs[t.Signal])})
	}
	return d
}
