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

// minStopGrace is the least time a container gets between SIGTERM and SIGKILL, whatever is left
// of its grace period after its preStop hook, as with the kubelet.
const minStopGrace = 2

// stopRequest is one container instance to stop and how.
type stopRequest struct {
	ID   string
	Name string
	// Grace is the grace period in seconds for the preStop hook and the stop together.
	Grace int64
	// Message is the Killing event's message; empty gives "Stopping container <name>".
	Message string
	// Events is false when the pod is gone from the API already: no events are recorded then.
	Events bool
	// WaitTurn, when set, blocks until the containers this one must outlive have stopped or
	// the budget runs out.
	WaitTurn func(budget time.Duration)
}

// stopContainer stops one container as the kubelet kills it: Killing event, preStop hook within
// the grace period, then StopContainer with what is left of it (at least minStopGrace).
func (p *Provider) stopContainer(ctx context.Context, pod *v1.Pod, r stopRequest) {
	spec := specOf(pod, r.Name)
	isInit := pod != nil && isInitName(pod, r.Name)
	if r.Events && pod != nil {
		msg := r.Message
		if msg == "" {
			msg = "Stopping container " + r.Name
		}
		p.containerEvent(pod, r.Name, isInit, v1.EventTypeNormal, eventKilling, "%s", msg)
	}
	grace := r.Grace
	if spec != nil && spec.Lifecycle != nil && spec.Lifecycle.PreStop != nil && grace > 0 {
		grace -= p.runPreStop(ctx, pod, spec, r, isInit)
	}
	if r.WaitTurn != nil && grace > 0 {
		start := time.Now()
		r.WaitTurn(time.Duration(grace) * time.Second)
		grace -= int64(time.Since(start).Seconds())
	}
	if grace < minStopGrace {
		grace = minStopGrace
	}
	// The runtime's own request timeout would cut a long grace period short.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Duration(grace)*time.Second+time.Minute)
	defer cancel()
	if err := cri.IgnoreNotFound(p.rt.Runtime.StopContainer(sctx, r.ID, grace)); err != nil {
		p.log.WithError(err).WithFields(map[string]any{"container": r.Name, "id": r.ID}).Warn("stopping container")
	}
}

// runPreStop runs the container's preStop hook for at most r.Grace seconds and returns the whole
// seconds it took. A hook still running then is left to the container's stop.
func (p *Provider) runPreStop(ctx context.Context, pod *v1.Pod, spec *v1.Container, r stopRequest, isInit bool) int64 {
	budget := time.Duration(r.Grace) * time.Second
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), budget+time.Minute)
	start := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer cancel()
		if _, err := p.hooks.run(hctx, hookTarget{Pod: pod, Container: spec, ContainerID: r.ID}, spec.Lifecycle.PreStop); err != nil {
			p.podLog(pod).WithError(err).WithField("container", r.Name).Warn("preStop hook failed")
			if r.Events {
				// Not the hook's message: it may hold what the command printed.
				p.containerEvent(pod, r.Name, isInit, v1.EventTypeWarning, eventFailedPreStopHook, "PreStopHook failed")
			}
		}
	}()
	t := time.NewTimer(budget)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		p.podLog(pod).WithField("container", r.Name).Info("preStop hook did not complete within the grace period")
	}
	return int64(time.Since(start).Seconds())
}

// killContainers stops every running container of the pod at once, as the kubelet does: each
// runs its preStop hook, and sidecars get their SIGTERM only after the containers they outlive
// have stopped (stopPrerequisites), all within the grace period.
func (p *Provider) killContainers(ctx context.Context, pod *v1.Pod, containers []*containerState, grace int64, events bool) {
	var live []*containerState
	var names []string
	for _, c := range containers {
		// Like the kubelet, only running containers are stopped (and get events); one created
		// but never started is just removed with the pod.
		if c.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
			continue
		}
		live = append(live, c)
		names = append(names, c.Name)
	}
	stopped := map[string]chan struct{}{}
	for _, n := range names {
		stopped[n] = make(chan struct{})
	}
	var prereqs map[string][]string
	if pod != nil {
		prereqs = stopPrerequisites(pod, names)
	}
	var wg sync.WaitGroup
	for _, c := range live {
		wg.Add(1)
		go func(c *containerState) {
			defer wg.Done()
			done := stopped[c.Name]
			defer func() {
				select {
				case <-done:
				default:
					close(done)
				}
			}()
			r := stopRequest{ID: c.ID, Name: c.Name, Grace: grace, Events: events}
			if deps := prereqs[c.Name]; len(deps) > 0 {
				r.WaitTurn = func(budget time.Duration) {
					t := time.NewTimer(budget)
					defer t.Stop()
					for _, d := range deps {
						select {
						case <-stopped[d]:
						case <-t.C:
							return
						}
					}
				}
			}
			p.stopContainer(ctx, pod, r)
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
	rec.mu.Lock()
	events := killingEvents(rec.orphan, rec.goneFromAPI, rec.deletedInAPI)
	orphan, spec, finished := rec.orphan, rec.pod, rec.finished
	rec.mu.Unlock()
	if orphan {
		log.WithField("gracePeriod", grace).Info("stopping the containers of a pod the API no longer has")
	}
	if spec != nil {
		// The kubelet's termination reports the pod as it is first, now that nothing in it will
		// start again: a container waiting to start or to be restarted shows its runtime state
		// (its last exit) instead of why it waited.
		p.setStatus(rec, spec, p.computeStatus(rec, spec, rt, finished, false))
	}
	if grace < 1 {
		// Like the kubelet, a zero grace period still gives 1 s (to the preStop hook, if any);
		// the container itself always gets minStopGrace after its SIGTERM.
		grace = 1
	}
	p.killContainers(ctx, pod, rt.Containers, grace, events)
	p.stopSandboxes(ctx, pod, rt)
	stoppedAt := time.Now()
	if rt, err = p.inspector.inspectPod(ctx, string(rec.uid)); err != nil {
		log.WithError(err).Warn("cannot read pod state from the runtime while terminating")
		return runtimeRetry, false
	}
	rec.mu.Lock()
	spec, deletedInAPI := rec.pod, rec.deletedInAPI
	rec.mu.Unlock()
	var final *v1.PodStatus
	if spec != nil {
		// Then, as the kubelet, the status once nothing runs, and the status manager's final
		// one (containers that never ended reported terminated, a terminal phase), the status
		// the pod leaves the API with.
		p.setStatus(rec, spec, p.computeStatus(rec, spec, rt, true, false))
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
	p.removePodCgroup(rec.uid)
	// The pod's logs go with it, as the kubelet removes the log directory of a deleted pod.
	if err := os.RemoveAll(podLogDir(p.cfg.PodLogRoot, pod)); err != nil {
		log.WithError(err).Warn("removing the pod's log directory")
	}
	if err := removePodContainerDirs(p.cfg.RootDir, string(rec.uid)); err != nil {
		log.WithError(err).Warn("removing the pod's termination message files")
	}
	log.Info("pod terminated and removed from the runtime")
	p.probes.RemovePod(rec.uid)
	if deletedInAPI {
		// In the worker, so that the pod's record stays (and virtual-kubelet's force deletions
		// are still handed over to it) until the pod is gone from the API.
		p.removeFromAPIInTurn(ctx, stoppedAt, func(ctx context.Context) { p.removeFromAPI(ctx, pod, final) })
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
