package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-cri/vk-cri/provider/volumes"
)

// eventFailedMount is the kubelet's event for a volume it could not set up.
const eventFailedMount = "FailedMount"

// noVolumesRetry is how soon a pod with volumes on a vk-cri without a volume manager looks
// again: the kubelet pod worker's back-off after a failed sync (10 s, plus up to 50 % jitter).
const noVolumesRetry = 10 * time.Second

// VolumeManager sets up the volumes of pods and gives containers their mounts
// (provider/volumes implements it).
type VolumeManager interface {
	SetUp(ctx context.Context, pod *v1.Pod) volumes.SetUpResult
	ContainerMounts(pod *v1.Pod, c *v1.Container, expand volumes.ExpandFunc) ([]*runtimeapi.Mount, error)
	TearDown(uid types.UID) error
	CleanupOrphans(live func(types.UID) bool) ([]types.UID, error)
}

var errNoVolumeSupport = errors.New("this vk-cri runs without a volume manager (no --root-dir)")

// setUpVolumes sets up or refreshes the pod's volumes, recording the kubelet's FailedMount events
// for what failed. It reports whether the pod must wait (a volume it never had is still missing)
// and, if so, when to look again: when the first failed volume may be retried, as the kubelet's
// volume manager retries it.
func (p *Provider) setUpVolumes(ctx context.Context, pod *v1.Pod) (blocked bool, retryIn time.Duration) {
	if len(pod.Spec.Volumes) == 0 {
		return false, 0
	}
	if p.cfg.Volumes == nil {
		p.podEvent(pod, v1.EventTypeWarning, eventFailedMount, "%v", errNoVolumeSupport)
		return true, wait.Jitter(noVolumesRetry, 0.5)
	}
	res := p.cfg.Volumes.SetUp(ctx, pod)
	for _, e := range res.Failed {
		p.podLog(pod).WithField("volume", e.Volume).WithError(e.Err).Warn("volume set-up failed")
		p.podEvent(pod, v1.EventTypeWarning, eventFailedMount, "%s", e.Error())
	}
	if e := res.Unprocessed; e != nil {
		p.podLog(pod).WithField("volumes", e.Unprocessed).Warn(strings.Join(e.Errs, "; "))
		p.podEvent(pod, v1.EventTypeWarning, eventFailedMount, "%s", e.Error())
	}
	return res.Waiting, res.RetryIn
}

// PodVolumesChanged asks for a sync of the pod: an object its volumes read has changed, and the
// sync carries the change into the pod's volumes.
func (p *Provider) PodVolumesChanged(uid types.UID) {
	if rec, ok := p.pods.get(uid); ok {
		rec.poke()
	}
}

// containerMounts is the container's mounts list: its volumeMounts, with subPathExpr expanded
// from its environment (the values by name).
func (p *Provider) containerMounts(pod *v1.Pod, c *v1.Container, env map[string]string) ([]*runtimeapi.Mount, error) {
	if len(c.VolumeMounts) == 0 {
		return nil, nil
	}
	if p.cfg.Volumes == nil {
		return nil, errNoVolumeSupport
	}
	return p.cfg.Volumes.ContainerMounts(pod, c, func(expr string) (string, error) {
		return volumes.ExpandSubPath(expr, env)
	})
}

// mountsPath reports whether one of the container's volumeMounts is at path.
func mountsPath(c *v1.Container, path string) bool {
	for _, m := range c.VolumeMounts {
		if m.MountPath == path {
			return true
		}
	}
	return false
}

// tearDownVolumes removes what the pod had mounted and then, as the kubelet does, releases the
// objects it referred to; a failure is retried by the caller.
func (p *Provider) tearDownVolumes(uid types.UID) error {
	if p.cfg.Volumes != nil {
		if err := p.cfg.Volumes.TearDown(uid); err != nil {
			return fmt.Errorf("tearing down volumes: %w", err)
		}
	}
	if p.cfg.Objects != nil {
		p.cfg.Objects.UnregisterPod(uid)
	}
	return nil
}

// cleanupOrphanedVolumes removes the directories of pods that the runtime no longer has (deleted
// while vk-cri was down); the pods it still runs keep theirs untouched.
func (p *Provider) cleanupOrphanedVolumes(live map[string]podIdentity) {
	if p.cfg.Volumes == nil {
		return
	}
	removed, err := p.cfg.Volumes.CleanupOrphans(func(uid types.UID) bool {
		_, ok := live[string(uid)]
		return ok
	})
	if err != nil {
		p.log.WithError(err).Warn("cleaning orphaned pod directories")
	}
	if len(removed) > 0 {
		p.log.WithField("pods", removed).Info("removed the directories of pods gone while vk-cri was down")
	}
}
