package provider

import (
	"context"
	"encoding/json"
	"os"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-cri/vk-cri/cri"
)

// stopContainer stops one container, giving it grace seconds between SIGTERM and SIGKILL. The
// Killing event says message ("Stopping container <name>" when empty).
func (p *Provider) stopContainer(ctx context.Context, pod *v1.Pod, id, name string, grace int64, message string) {
	if pod != nil && pod.Spec.Containers != nil {
		if message == "" {
			message = "Stopping container " + name
		}
		p.containerEvent(pod, name, isInitName(pod, name), v1.EventTypeNormal, eventKilling, "%s", message)
	}
	// The runtime's own request timeout would cut a long grace period short.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Duration(grace)*time.Second+time.Minute)
	defer cancel()
	if err := cri.IgnoreNotFound(p.rt.Runtime.StopContainer(sctx, id, grace)); err != nil {
		p.log.WithError(err).WithFields(map[string]any{"container": name, "id": id}).Warn("stopping container")
	}
}

// killContainers stops every running container of the pod at once, as the kubelet does.
func (p *Provider) killContainers(ctx context.Context, pod *v1.Pod, containers []*containerState, grace int64, message string) {
	var wg sync.WaitGroup
	for _, c := range containers {
		if c.State != runtimeapi.ContainerState_CONTAINER_RUNNING && c.State != runtimeapi.ContainerState_CONTAINER_CREATED {
			continue
		}
		wg.Add(1)
		go func(c *containerState) {
			defer wg.Done()
			p.stopContainer(ctx, pod, c.ID, c.Name, grace, message)
		}(c)
	}
	wg.Wait()
}

// stopSandboxes stops the pod's sandboxes (and so its network), keeping them for inspection.
func (p *Provider) stopSandboxes(ctx context.Context, pod *v1.Pod, rt *podRuntime) {
	for _, sb := range rt.Sandboxes {
		if !sb.Ready {
			continue
		}
		if err := cri.IgnoreNotFound(p.rt.Runtime.StopPodSandbox(ctx, sb.ID)); err != nil {
			p.log.WithError(err).WithFields(map[string]any{"pod": pod.Namespace + "/" + pod.Name, "sandbox": sb.ID}).Warn("stopping pod sandbox")
		}
	}
}

// terminatePod tears a deleted pod down: stop its containers within the grace period, report
// them terminated, then remove containers and sandboxes. It reports the pod gone once the
// runtime holds nothing of it.
func (p *Provider) terminatePod(ctx context.Context, rec *podRecord, grace int64) (time.Duration, bool) {
	pod := rec.view()
	log := p.podLog(pod)
	// Nothing restarts a terminating pod's containers: a failing liveness probe must not kill one.
	p.probes.StopLivenessAndStartup(rec.uid)
	rt, err := p.inspector.inspectPod(ctx, string(rec.uid))
	if err != nil {
		log.WithError(err).Warn("cannot read pod state from the runtime while terminating")
		return runtimeRetry, false
	}
	// A pod force-deleted from the API (grace 0) is gone already: the kubelet records no
	// Killing event for its containers then.
	eventPod := pod
	rec.mu.Lock()
	if rec.gracePeriod == 0 || (rec.goneFromAPI && !rec.deletedInAPI) {
		eventPod = nil
	}
	rec.mu.Unlock()
	if grace < 1 {
		// A zero grace period means "as fast as possible", which still lets the process see SIGTERM
		// for a moment, as with the kubelet's minimum.
		grace = 1
	}
	p.killContainers(ctx, eventPod, rt.Containers, grace, "")
	p.stopSandboxes(ctx, pod, rt)
	if rt, err = p.inspector.inspectPod(ctx, string(rec.uid)); err != nil {
		log.WithError(err).Warn("cannot read pod state from the runtime while terminating")
		return runtimeRetry, false
	}
	rec.mu.Lock()
	spec, deletedInAPI := rec.pod, rec.deletedInAPI
	rec.mu.Unlock()
	var final *v1.PodStatus
	if spec != nil {
		st := p.computeStatus(rec, spec, rt, true, true)
		p.setStatus(rec, spec, st)
		final = &st
	}
	for _, c := range rt.Containers {
		if err := cri.IgnoreNotFound(p.rt.Runtime.RemoveContainer(ctx, c.ID)); err != nil {
			log.WithError(err).WithField("container", c.Name).Warn("removing container")
			return runtimeRetry, false
		}
	}
	for _, sb := range rt.Sandboxes {
		if err := cri.IgnoreNotFound(p.rt.Runtime.RemovePodSandbox(ctx, sb.ID)); err != nil {
			log.WithError(err).WithField("sandbox", sb.ID).Warn("removing pod sandbox")
			return runtimeRetry, false
		}
	}
	if err := p.tearDownVolumes(rec.uid); err != nil {
		log.WithError(err).Warn("terminating pod")
		return runtimeRetry, false
	}
	// The pod's logs go with it, as the kubelet removes the log directory of a deleted pod.
	if err := os.RemoveAll(podLogDir(p.cfg.PodLogRoot, pod)); err != nil {
		log.WithError(err).Warn("removing the pod's log directory")
	}
	log.Info("pod terminated and removed from the runtime")
	p.probes.RemovePod(rec.uid)
	if deletedInAPI {
		go p.removeFromAPI(context.WithoutCancel(ctx), pod, final)
	}
	return 0, true
}

// removeFromAPI ends a terminated pod's life in the API as the kubelet's status manager does:
// it writes the final status itself (a patch, so it never loses a resourceVersion race the way
// a queued update can), then deletes the pod with grace 0. Both carry the pod's UID as a
// precondition, so a successor of the same name is never touched.
func (p *Provider) removeFromAPI(ctx context.Context, pod *v1.Pod, final *v1.PodStatus) {
	if p.cfg.Pods == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	client := p.cfg.Pods.Pods(pod.Namespace)
	log := p.podLog(pod)
	if final != nil {
		patch, err := json.Marshal(map[string]any{
			"metadata": map[string]any{"uid": pod.UID},
			"status":   final,
		})
		if err == nil {
			_, err = client.Patch(ctx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
		}
		switch {
		case apierrors.IsNotFound(err), apierrors.IsConflict(err):
			return // gone already, or a successor under the same name
		case err != nil:
			log.WithError(err).Warn("writing the final status of the terminated pod")
		}
	}
	zero := int64(0)
	uid := pod.UID
	err := client.Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		log.WithError(err).Warn("removing the terminated pod from the API")
	}
}
