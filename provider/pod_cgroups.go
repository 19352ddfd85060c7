package provider

import (
	"context"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vk-cri/vk-cri/cm"
)

// The kubelet's event when the pod cgroup cannot be made (events.FailedToCreatePodContainer).
const eventFailedToCreatePodContainer = "FailedCreatePodContainer"

// qosCgroupUpdateInterval is how often the QoS cgroups are set again and orphaned pod cgroups
// removed (the kubelet: periodicQOSCgroupUpdateInterval, and its housekeeping).
const qosCgroupUpdateInterval = time.Minute

// PodCgroups is what the provider asks of the node's pod and QoS cgroups (cm.Manager).
type PodCgroups interface {
	Start(nodeAllocatable *cm.ResourceConfig) error
	EnsurePod(pod *v1.Pod, active []*v1.Pod) error
	UpdateQOS(active []*v1.Pod) error
	ReadPod(pod *v1.Pod) (*cm.ResourceConfig, error)
	PodMemoryUsage(pod *v1.Pod) (int64, error)
	SetPod(pod *v1.Pod, rc *cm.ResourceConfig) error
	DestroyPod(uid types.UID) error
	CleanupOrphans(live func(types.UID) bool) ([]types.UID, error)
}

// activePods are the pods the node runs or will run (the kubelet's GetActivePods): known from
// the API and still synced, not terminating or terminated.
func (p *Provider) activePods() []*v1.Pod {
	var out []*v1.Pod
	for _, r := range p.pods.list() {
		r.mu.Lock()
		pod, state := r.pod, r.lifecycle.state
		r.mu.Unlock()
		if pod == nil || state >= podTerminating {
			continue
		}
		if alloc, ok := p.alloc.allocated(pod.UID); ok {
			pod = withAllocation(pod, alloc)
		}
		out = append(out, pod)
	}
	return out
}

// startPodCgroups creates kubepods and the QoS cgroups, then keeps the QoS cgroups set and
// removes the cgroups of pods the node no longer has, every minute.
func (p *Provider) startPodCgroups(ctx context.Context) error {
	cg := p.cfg.PodCgroups
	if cg == nil {
		return nil
	}
	if err := cg.Start(p.cfg.NodeAllocatableCgroup); err != nil {
		return fmt.Errorf("creating the node's pod cgroups: %w", err)
	}
	// The kubelet's QoS loop sets the QoS cgroups at once, then every minute.
	if err := cg.UpdateQOS(p.activePods()); err != nil {
		p.log.WithError(err).Warn("updating the QoS cgroups")
	}
	go func() {
		t := time.NewTicker(qosCgroupUpdateInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if err := cg.UpdateQOS(p.activePods()); err != nil {
				p.log.WithError(err).Warn("updating the QoS cgroups")
			}
			removed, err := cg.CleanupOrphans(p.podMayRun)
			if err != nil {
				p.log.WithError(err).Warn("removing orphaned pod cgroups")
			}
			for _, uid := range removed {
				p.log.WithField("podUID", uid).Info("orphaned pod cgroup removed")
			}
		}
	}()
	return nil
}

// podMayRun is the kubelet's "possibly running" set for its orphaned cgroup cleanup: a pod the
// node has (from the API or found in the runtime) that is not terminated yet.
func (p *Provider) podMayRun(uid types.UID) bool {
	rec, ok := p.pods.get(uid)
	if !ok {
		return false
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.lifecycle.state < podTerminated
}

// ensurePodCgroup makes the pod's cgroup, with its limits, before its sandbox is created.
func (p *Provider) ensurePodCgroup(pod *v1.Pod) error {
	cg := p.cfg.PodCgroups
	if cg == nil {
		return nil
	}
	err := cg.EnsurePod(pod, p.activePods())
	if errors.Is(err, cm.ErrQOSUpdate) {
		p.podLog(pod).WithError(err).Warn("failed to update QoS cgroups while syncing pod")
		return nil
	}
	if err != nil {
		p.podEvent(pod, v1.EventTypeWarning, eventFailedToCreatePodContainer, "unable to ensure pod container exists: %v", err)
	}
	return err
}

// podCgroupResize is a resize's pod cgroup steps: what to write before the containers are
// updated and after (cm.ResizeSteps); both nil without pod cgroups. refused says why the pod's
// memory limit may not go down (its usage), if so.
type podCgroupResize struct {
	before, after *cm.ResourceConfig
	refused       error
}

// planPodCgroupResize reads the pod cgroup and compares it with the allocated pod's settings;
// as the kubelet's validateMemoryResizeAction it marks refused a pod memory limit lowered to or
// below what the pod uses now.
func (p *Provider) planPodCgroupResize(pod *v1.Pod) (podCgroupResize, error) {
	cg := p.cfg.PodCgroups
	if cg == nil {
		return podCgroupResize{}, nil
	}
	current, err := cg.ReadPod(pod)
	if err != nil {
		return podCgroupResize{}, fmt.Errorf("unable to get pod cgroup config for pod %q: %w", pod.Name, err)
	}
	desired := cm.PodResourceConfig(pod, p.cfg.PodCgroupOptions)
	before, after := cm.ResizeSteps(current, desired)
	plan := podCgroupResize{before: before, after: after}
	if desired.Memory != nil && current.Memory != nil && *desired.Memory < *current.Memory {
		usage, err := cg.PodMemoryUsage(pod)
		switch {
		case err != nil:
			plan.refused = errors.New("missing pod memory usage")
		case usage >= *desired.Memory:
			plan.refused = fmt.Errorf("attempting to set pod memory limit (%d) below current usage (%d)", *desired.Memory, usage)
		}
	}
	return plan, nil
}

// restartsForResize reports whether the sync restarts a container for its resize policy: the
// pod cgroup takes the new resources then too, before the container starts again (the
// kubelet's computePodResizeAction sets UpdatePodResources, and doPodResizeAction runs between
// the kills and the starts).
func restartsForResize(a podActions) bool {
	for _, k := range a.ContainersToKill {
		if k.Reason == "resize" {
			return true
		}
	}
	return false
}

// applyPodCgroupStep writes one step of a resize to the pod cgroup.
func (p *Provider) applyPodCgroupStep(pod *v1.Pod, rc *cm.ResourceConfig) error {
	if rc == nil || p.cfg.PodCgroups == nil {
		return nil
	}
	return p.cfg.PodCgroups.SetPod(pod, rc)
}

// removePodCgroup removes the pod's cgroup once nothing of it runs, then sets the QoS cgroups
// for the pods left (the kubelet: SyncTerminatedPod's pcm.Destroy; killPod's UpdateQOSCgroups).
// A failure is logged: the periodic orphan cleanup tries again.
func (p *Provider) removePodCgroup(uid types.UID) {
	cg := p.cfg.PodCgroups
	if cg == nil {
		return
	}
	log := p.log.WithField("podUID", uid)
	if err := cg.DestroyPod(uid); err != nil {
		log.WithError(err).Warn("removing the pod's cgroup")
	}
	if err := cg.UpdateQOS(p.activePods()); err != nil {
		log.WithError(err).Warn("updating the QoS cgroups")
	}
}

// podCgroupReadback is the pod cgroup's settings for the status's resources: nil without pod
// cgroups or when it cannot be read (then the kubelet's values are modelled).
func (p *Provider) podCgroupReadback(pod *v1.Pod) *cm.ResourceConfig {
	cg := p.cfg.PodCgroups
	if cg == nil || pod == nil {
		return nil
	}
	rc, err := cg.ReadPod(pod)
	if err != nil {
		return nil
	}
	return rc
}
