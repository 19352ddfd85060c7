package provider

import (
	"context"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/vk-cri/vk-cri/cri"
)

// containerDeletorBuffer is how many removals may wait, the kubelet's containerDeletorBufferLimit
// (pkg/kubelet/pod_container_deletor.go).
const containerDeletorBuffer = 50

// deadInstance is one container instance to remove, with what its log lines name.
type deadInstance struct {
	ID        string
	Container string
	Log       *logrus.Entry
}

// containerDeletor removes surplus dead container instances off the pod workers, as the
// kubelet's podContainerDeletor does: one goroutine serves a buffered queue, and a request that
// finds the queue full is dropped (the pod's next sync asks again). So a slow RemoveContainer
// never holds up a pod's sync: CRI-O 1.36 took 51 s to remove an exited instance while the next
// one of its container ran, and a deletor inside the sync delayed that pod's restarts and its
// deletion by as much. An instance already queued or being removed is not queued again.
type containerDeletor struct {
	remove  func(ctx context.Context, id string) error
	timeout time.Duration
	queue   chan deadInstance

	mu      sync.Mutex
	pending map[string]bool
}

func newContainerDeletor(remove func(ctx context.Context, id string) error, timeout time.Duration) *containerDeletor {
	return &containerDeletor{
		remove:  remove,
		timeout: timeout,
		queue:   make(chan deadInstance, containerDeletorBuffer),
		pending: map[string]bool{},
	}
}

// request queues the instance's removal; false when it is queued already or the queue is full.
func (d *containerDeletor) request(inst deadInstance) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.pending[inst.ID] {
		return false
	}
	select {
	case d.queue <- inst:
		d.pending[inst.ID] = true
		return true
	default:
		inst.Log.WithField("container", inst.Container).Warn("container deletor busy: removing the dead instance later")
		return false
	}
}

// run removes the queued instances one at a time until ctx is done.
func (d *containerDeletor) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case inst := <-d.queue:
			rctx, cancel := context.WithTimeout(ctx, d.timeout)
			err := cri.IgnoreNotFound(d.remove(rctx, inst.ID))
			cancel()
			if err != nil {
				inst.Log.WithError(err).WithField("container", inst.Container).Warn("removing a dead container instance")
			}
			d.mu.Lock()
			delete(d.pending, inst.ID)
			d.mu.Unlock()
		}
	}
}
