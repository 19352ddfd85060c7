package logrotate

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"
)

// Runtime is the part of a CRI runtime service the rotation uses.
type Runtime interface {
	ListContainers(ctx context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error)
	ContainerStatus(ctx context.Context, containerID string, verbose bool) (*runtimeapi.ContainerStatusResponse, error)
	reopener
}

// Manager rotates the logs of the running containers that carry its labels.
type Manager struct {
	rt       Runtime
	policy   Policy
	selector map[string]string
	interval time.Duration
	timeout  time.Duration
	clock    clock.WithTicker
	log      *logrus.Entry

	// mu keeps rounds apart when one outlasts the interval.
	mu sync.Mutex
}

// DefaultPolicy is the kubelet's: 10 MiB, 5 files.
var DefaultPolicy = Policy{MaxSize: 10 * 1024 * 1024, MaxFiles: 5}

// DefaultInterval is the kubelet's containerLogMonitorInterval.
const DefaultInterval = 10 * time.Second

// Option changes a Manager.
type Option func(*Manager)

// WithPolicy sets the size and count limits.
func WithPolicy(p Policy) Option { return func(m *Manager) { m.policy = p } }

// WithInterval sets how often the logs are looked at.
func WithInterval(d time.Duration) Option { return func(m *Manager) { m.interval = d } }

// WithSelector limits the rotation to containers with these labels (the node's own).
func WithSelector(labels map[string]string) Option {
	return func(m *Manager) { m.selector = labels }
}

// WithClock sets the clock that names rotated files.
func WithClock(c clock.WithTicker) Option { return func(m *Manager) { m.clock = c } }

// WithLogger sets where failures are reported.
func WithLogger(l *logrus.Entry) Option { return func(m *Manager) { m.log = l } }

// WithRequestTimeout bounds each runtime call.
func WithRequestTimeout(d time.Duration) Option { return func(m *Manager) { m.timeout = d } }

// New builds a Manager; Run starts it.
func New(rt Runtime, opts ...Option) (*Manager, error) {
	m := &Manager{
		rt: rt, policy: DefaultPolicy, interval: DefaultInterval, timeout: 30 * time.Second,
		clock: clock.RealClock{}, log: logrus.NewEntry(logrus.StandardLogger()),
	}
	for _, o := range opts {
		o(m)
	}
	if err := m.policy.Validate(); err != nil {
		return nil, err
	}
	if m.interval <= 0 {
		return nil, fmt.Errorf("container log monitor interval must be positive, not %v", m.interval)
	}
	return m, nil
}

// Run rotates logs every interval until ctx ends. A policy with a negative size does nothing.
func (m *Manager) Run(ctx context.Context) {
	if m.policy.MaxSize < 0 {
		m.log.Info("container log rotation disabled")
		return
	}
	m.log.WithFields(logrus.Fields{"maxSize": m.policy.MaxSize, "maxFiles": m.policy.MaxFiles, "interval": m.interval}).Info("container log rotation running")
	t := m.clock.NewTicker(m.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			if err := m.RotateOnce(ctx); err != nil {
				m.log.WithError(err).Warn("rotating container logs")
			}
		}
	}
}

// RotateOnce looks at every running container once and rotates the logs that reached the
// size limit. One container's failure does not keep the others from being rotated.
func (m *Manager) RotateOnce(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	lctx, cancel := context.WithTimeout(ctx, m.timeout)
	containers, err := m.rt.ListContainers(lctx, &runtimeapi.ContainerFilter{
		State:         &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING},
		LabelSelector: m.selector,
	})
	cancel()
	if err != nil {
		return fmt.Errorf("listing running containers: %w", err)
	}
	for _, c := range containers {
		// A container that stopped writes nothing more: its last file stays as it is.
		if c.GetState() != runtimeapi.ContainerState_CONTAINER_RUNNING {
			continue
		}
		if err := m.rotateContainer(ctx, c.GetId()); err != nil {
			m.log.WithError(err).WithFields(logrus.Fields{
				"container": c.GetMetadata().GetName(), "id": c.GetId(),
				"pod": c.GetLabels()["io.kubernetes.pod.namespace"] + "/" + c.GetLabels()["io.kubernetes.pod.name"],
			}).Warn("rotating container log")
		}
	}
	return nil
}

func (m *Manager) rotateContainer(ctx context.Context, id string) error {
	ctx, cancel := context.WithTimeout(ctx, m.timeout)
	defer cancel()
	resp, err := m.rt.ContainerStatus(ctx, id, false)
	if err != nil {
		return fmt.Errorf("container status: %w", err)
	}
	log := resp.GetStatus().GetLogPath()
	if log == "" {
		return nil
	}
	info, err := os.Stat(log)
	if os.IsNotExist(err) {
		// A rotation interrupted between the rename and the reopen: have the runtime
		// create the file again.
		if err := m.rt.ReopenContainerLog(ctx, id); err != nil {
			return fmt.Errorf("log %s is missing and reopening it failed: %w", log, err)
		}
		info, err = os.Stat(log)
	}
	if err != nil {
		return fmt.Errorf("reading log size: %w", err)
	}
	if !m.policy.needsRotation(info.Size()) {
		return nil
	}
	siblings, err := rotatedFiles(log)
	if err != nil {
		return err
	}
	return rotate(ctx, m.rt, id, log, planRotation(log, siblings, m.policy, m.clock.Now()))
}
