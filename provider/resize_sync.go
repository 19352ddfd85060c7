package provider

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-cri/vk-cri/provider/translate"
)

// resizeUpdateTimeout bounds one UpdateContainerResources call.
const resizeUpdateTimeout = 30 * time.Second

// allocate returns the pod as allocated. A pod seen for the first time is admitted at its
// spec's resources. A spec asking for other resources than allocated is a resize: admitted
// against the node's allocatable and the other pods' allocations, it becomes the allocation
// (ResizeStarted, PodResizeInProgress); otherwise it waits (PodResizePending, ResizeDeferred)
// and the pod keeps its allocation, as with the kubelet's allocation manager.
func (p *Provider) allocate(rec *podRecord, pod *v1.Pod, rt *podRuntime) *v1.Pod {
	log := p.podLog(pod)
	p.loadResizeConditions(rec)
	alloc, ok := p.alloc.allocated(pod.UID)
	if !ok {
		spec := specAllocation(pod)
		if err := p.alloc.setAllocated(pod.UID, spec); err != nil {
			log.WithError(err).Warn("recording the pod's allocated resources")
		}
		// Containers that run already were created from this spec (found at start-up, from a
		// vk-cri that kept no allocations): that is what was applied to them.
		for _, c := range rt.Containers {
			if r, ok := spec[c.Name]; ok && c.running() {
				if err := p.alloc.setActuated(pod.UID, c.Name, r); err != nil {
					log.WithError(err).Warn("recording the containers' applied resources")
				}
			}
		}
		return pod
	}
	now := time.Now()
	if !allocationDiffers(pod, alloc) {
		// Nothing asked, or a waiting resize was reverted.
		rec.mu.Lock()
		rec.resize.Pending = nil
		rec.mu.Unlock()
		return pod
	}
	others, complete := p.otherAllocatedPods(pod.UID)
	_, allocatable := p.currentNodeFacts()
	if !complete || allocatable == nil {
		// Like the kubelet, which resolves no resize before it knows all its pods and its
		// node: after a restart, a pod found in the runtime and not yet claimed by the API
		// still holds its resources, and the node's allocatable is read a moment after the
		// workers start. A claim, or the next sync, evaluates the resize.
		return withAllocation(pod, alloc)
	}
	verdict := admitResize(pod, others, allocatable)
	if verdict.Fit {
		if err := p.alloc.setAllocated(pod.UID, specAllocation(pod)); err != nil {
			log.WithError(err).Warn("recording the resize's allocation")
			return withAllocation(pod, alloc)
		}
		rec.mu.Lock()
		rec.resize.Pending = nil
		rec.resize.clearInProgress()
		rec.resize.setInProgress("", "", pod.Generation, now)
		rec.mu.Unlock()
		log.WithFields(map[string]any{"generation": pod.Generation, "otherPods": len(others)}).Info("resize accepted")
		p.podEvent(pod, v1.EventTypeNormal, eventResizeStarted, "%s", resizeEventMessage("Pod resize started", pod, pod.Generation, ""))
		return pod
	}
	rec.mu.Lock()
	changed := rec.resize.setPending(verdict.Reason, verdict.Message, pod.Generation, now)
	rec.mu.Unlock()
	if changed {
		log.WithFields(map[string]any{"reason": verdict.Reason, "message": verdict.Message}).Info("resize pending")
		event := eventResizeDeferred
		if verdict.Reason == v1.PodReasonInfeasible {
			event = eventResizeInfeasible
		}
		p.podEvent(pod, v1.EventTypeWarning, event, "%s", resizeEventMessage("Pod resize "+verdict.Refusal, pod, pod.Generation, verdict.Message))
	}
	return withAllocation(pod, alloc)
}

// loadResizeConditions takes, once, the resize conditions the pod's last reported status
// carries (a status written before vk-cri restarted).
func (p *Provider) loadResizeConditions(rec *podRecord) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.resizeLoaded {
		return
	}
	rec.resizeLoaded = true
	if rec.status != nil {
		rec.resize = backfillResizeConditions(rec.status.Conditions)
	}
}

// otherAllocatedPods are the node's other active pods at their allocated resources: what a
// resize must fit next to. It reports false while some pod found in the runtime at start-up
// is not known from the API yet (its resources are not known then).
func (p *Provider) otherAllocatedPods(uid types.UID) ([]*v1.Pod, bool) {
	var out []*v1.Pod
	for _, r := range p.pods.list() {
		r.mu.Lock()
		// Like the kubelet's active pods (filterOutInactivePods): a pod whose containers have
		// all stopped no longer holds resources, whatever ended it; a terminating one does.
		pod, finished, deleting := r.pod, r.lifecycle.state >= podTerminated, r.lifecycle.deletion != nil
		r.mu.Unlock()
		if pod == nil && !deleting {
			return nil, false
		}
		if pod == nil || finished || pod.UID == uid {
			continue
		}
		if alloc, ok := p.alloc.allocated(pod.UID); ok {
			out = append(out, withAllocation(pod, alloc))
		}
	}
	return out, true
}

// trackResizeProgress keeps PodResizeInProgress while a running container's applied resources
// differ from its allocation and ends it, with ResizeCompleted, once none does.
func (p *Provider) trackResizeProgress(rec *podRecord, pod *v1.Pod, rt *podRuntime) {
	rt.Actuated = p.alloc.actuated(pod.UID)
	inProgress := resizeInProgress(pod, rt)
	rec.mu.Lock()
	var gen int64
	var cleared bool
	if inProgress {
		rec.resize.setInProgress("", "", pod.Generation, time.Now())
	} else {
		gen, cleared = rec.resize.clearInProgress()
	}
	rec.mu.Unlock()
	if cleared {
		p.podLog(pod).WithField("generation", gen).Info("resize completed")
		p.podEvent(pod, v1.EventTypeNormal, eventResizeCompleted, "%s", resizeEventMessage("Pod resize completed", pod, gen, ""))
	}
}

// resizeFailed shows a resize the runtime did not carry out: PodResizeInProgress with reason
// Error and a ResizeError event, as the kubelet reports a failed in-place resize. The next
// sync tries again.
func (p *Provider) resizeFailed(rec *podRecord, pod *v1.Pod, err error) {
	rec.mu.Lock()
	gen, changed := rec.resize.setInProgress(v1.PodReasonError, err.Error(), pod.Generation, time.Now())
	rec.mu.Unlock()
	p.podLog(pod).WithError(err).Warn("resize failed")
	if changed {
		p.podEvent(pod, v1.EventTypeWarning, eventResizeError, "%s", resizeEventMessage("Pod resize error", pod, gen, err.Error()))
	}
}

// retryPendingResizes wakes the pods whose resize waits for resources, once some were freed
// (a pod finished or went), as the kubelet retries its pending resizes then.
func (p *Provider) retryPendingResizes() {
	for _, r := range p.pods.list() {
		r.mu.Lock()
		pending, pod := r.resize.Pending != nil, r.pod
		r.mu.Unlock()
		if !pending && pod != nil {
			// A resize asked for while it could not be evaluated yet (after a restart).
			alloc, ok := p.alloc.allocated(pod.UID)
			pending = ok && allocationDiffers(pod, alloc)
		}
		if pending {
			r.poke()
		}
	}
}

// resizeContainers applies the new resources of running containers through the runtime.
// A memory limit may not go below what the container uses now: the kubelet refuses that
// resize (it would have the container OOM-killed) and so does vk-cri.
func (p *Provider) resizeContainers(ctx context.Context, rec *podRecord, pod *v1.Pod, targets []resizeTarget) error {
	node, _ := p.currentNodeFacts()
	podCgroup, err := p.planPodCgroupResize(pod)
	if err != nil {
		return err
	}
	// As the kubelet's validateMemoryResizeAction, every decrease is checked before anything
	// changes: the pod's limit against the pod's usage, then each container's.
	var refused []error
	if podCgroup.refused != nil {
		refused = append(refused, podCgroup.refused)
	}
	for _, t := range targets {
		if containerByIndex(pod, t.Index, t.Init) == nil {
			continue
		}
		if err := p.checkMemoryDecrease(ctx, t); err != nil {
			refused = append(refused, err)
		}
	}
	if len(refused) > 0 {
		return fmt.Errorf("cannot decrease memory limits: %w", utilerrors.NewAggregate(refused))
	}
	if err := p.applyPodCgroupStep(pod, podCgroup.before); err != nil {
		return err
	}
	for _, t := range targets {
		c := containerByIndex(pod, t.Index, t.Init)
		if c == nil {
			continue
		}
		res := &runtimeapi.ContainerResources{Linux: translate.ContainerResources(node, pod, c)}
		uctx, cancel := context.WithTimeout(ctx, resizeUpdateTimeout)
		err := p.rt.Runtime.UpdateContainerResources(uctx, t.ID, res)
		cancel()
		p.inspector.forgetContainer(t.ID)
		if err != nil {
			return fmt.Errorf("container %q: UpdateContainerResources: %w", t.Name, err)
		}
		if err := p.alloc.setActuated(pod.UID, t.Name, t.Desired); err != nil {
			p.podLog(pod).WithError(err).WithField("container", t.Name).Warn("recording the applied resources")
		}
		p.podLog(pod).WithFields(map[string]any{"container": t.Name, "resources": t.Desired.String()}).Info("container resized")
	}
	return p.applyPodCgroupStep(pod, podCgroup.after)
}

// checkMemoryDecrease refuses a memory limit set (or lowered) below the container's usage.
func (p *Provider) checkMemoryDecrease(ctx context.Context, t resizeTarget) error {
	want := t.Desired.Limits.Memory().Value()
	have := t.Current.Limits.Memory().Value()
	if want == 0 || (have != 0 && want >= have) {
		return nil
	}
	sctx, cancel := context.WithTimeout(ctx, resizeUpdateTimeout)
	defer cancel()
	stats, err := p.rt.Runtime.ContainerStats(sctx, t.ID)
	if err != nil || stats.GetMemory().GetUsageBytes() == nil {
		return fmt.Errorf("missing container %q memory usage", t.Name)
	}
	if usage := stats.GetMemory().GetUsageBytes().GetValue(); usage >= uint64(want) {
		return fmt.Errorf("attempting to set container %q memory limit (%d) below current usage (%d)", t.Name, want, usage)
	}
	return nil
}

func containerByIndex(pod *v1.Pod, i int, isInit bool) *v1.Container {
	list := pod.Spec.Containers
	if isInit {
		list = pod.Spec.InitContainers
	}
	if i < 0 || i >= len(list) {
		return nil
	}
	return &list[i]
}
