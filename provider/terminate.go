package provider

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-cri/vk-cri/cri"
	"github.com/vk-cri/vk-cri/provider/podspec"
	"github.com/vk-cri/vk-cri/provider/status"
	"github.com/vk-cri/vk-cri/provider/translate"
)

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
	isInit := pod != nil && podspec.IsInitContainer(pod, r.Name)
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
	if err := cri.IgnoreNotFound(p.runtime.StopContainer(sctx, r.ID, grace)); err != nil {
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
		if err := cri.IgnoreNotFound(p.runtime.StopPodSandbox(ctx, sb.ID)); err != nil {
			p.log.WithError(err).WithFields(map[string]any{"pod": pod.Namespace + "/" + pod.Name, "sandbox": sb.ID}).Warn("stopping pod sandbox")
		}
	}
}

// terminationPlan is how the pod's containers are stopped, decided for every reason in one
// place (planTermination) from the lifecycle and the spec.
type terminationPlan struct {
	// Grace is the grace period for the preStop hooks and stops together.
	Grace int64
	// Events is false when no Killing events are recorded (killingEvents).
	Events bool
	// ReportFirst reports the pod as it is before anything stops: a deleted pod's termination
	// does, now that nothing in it will start again (a container waiting to start or to be
	// restarted shows its runtime state, its last exit, instead of why it waited).
	ReportFirst bool
	// Event, when set, is the pod's Normal event that the termination begins with (a deadline
	// exceeded); an eviction's event is recorded when it is requested.
	Event *podFailure
}

// planTermination decides how a terminating pod's containers are stopped, as the kubelet's
// SyncTerminatingPod does for each reason.
func planTermination(spec *v1.Pod, l podLifecycle) terminationPlan {
	plan := terminationPlan{Grace: terminationGracePeriod(spec, l), Events: true}
	if d := l.deletion; d != nil {
		plan.Events = killingEvents(l.orphan(), d.goneFromAPI, d.inAPI)
		plan.ReportFirst = spec != nil
	}
	if l.reason == terminationDeadlineExceeded {
		plan.Event = l.failure
	}
	return plan
}

// terminate is the one termination path, for every reason: it takes the pod from where its
// lifecycle stands as far as it goes (pod_lifecycle.go draws the states):
//
//   - terminating, as the kubelet's SyncTerminatingPod: liveness and startup probes stopped,
//     every running container stopped within the grace period (Killing events, preStop hooks,
//     the stop order of stop_order.go), the sandboxes stopped; the pod is then terminated and
//     reported as it is once nothing runs.
//   - terminated, as SyncTerminatedPod: its volumes torn down and the objects it referred to
//     released, whatever the reason (deadline exceeded and evicted included).
//   - deleted: the status manager's final status, containers, sandboxes, logs and per-pod
//     files removed, then the pod removed from the API in its turn; the pod is removed.
//
// It reports whether the pod is gone. On an error the pod stays where it got to, and its worker
// tries again later from there.
func (p *Provider) terminate(ctx context.Context, rec *podRecord) (gone bool, err error) {
	pod := rec.view()
	log := p.podLog(pod)
	rec.mu.Lock()
	l, spec := rec.lifecycle, rec.pod
	rec.mu.Unlock()
	// Only a deletion seen now removes the pod: one that comes while this termination runs has
	// its turn first (the worker's next sync).
	removal := l.deletion != nil
	var rt *podRuntime
	var stoppedAt time.Time
	if l.state == podTerminating {
		plan := planTermination(spec, l)
		// Nothing restarts a terminating pod's containers: a failing liveness probe must not kill one.
		p.probes.StopLivenessAndStartup(rec.uid)
		if rt, err = p.runtime.inspectPod(ctx, string(rec.uid)); err != nil {
			return false, fmt.Errorf("reading the pod's state from the runtime while terminating: %w", err)
		}
		if l.orphan() {
			log.WithField("gracePeriod", plan.Grace).Info("stopping the containers of a pod the API no longer has")
		}
		if plan.ReportFirst {
			p.setStatus(rec, spec, p.computeStatus(rec, spec, rt, statusLive))
		}
		if plan.Event != nil {
			log.WithField("reason", plan.Event.Reason).Info("ending the pod")
			p.podEvent(pod, v1.EventTypeNormal, plan.Event.Reason, "%s", plan.Event.Message)
		}
		p.killContainers(ctx, pod, rt.Containers, plan.Grace, plan.Events)
		p.stopSandboxes(ctx, pod, rt)
		if err := rec.transition(lifecycleChange{to: podTerminated}); err != nil {
			return false, err
		}
		if l.reason.keepsPod() {
			log.WithField("reason", l.reason).Info("pod finished")
			// Its resources are free: resizes waiting for them are tried again.
			p.retryPendingResizes()
		}
		if rt, err = p.runtime.inspectPod(ctx, string(rec.uid)); err != nil {
			return false, fmt.Errorf("reading the pod's state from the runtime while terminating: %w", err)
		}
		if spec != nil {
			// As the kubelet, the status once nothing runs.
			p.setStatus(rec, spec, p.computeStatus(rec, spec, rt, statusTerminal))
		}
		// SyncTerminatingPod ends here; the terminated sync that lets the status manager delete
		// the pod waits for a relist newer than this end (pod_workers.go GetNewerThan), so that
		// the status above is visible in the API for at least the rest of a relist.
		stoppedAt = time.Now()
		l = rec.lifecycleNow()
		if removal && spec != nil && l.deletion != nil && l.deletion.inAPI {
			// The kubelet tears the volumes down in that sync (SyncTerminatedPod), in its turn:
			// the teardown adds to the time the final status is visible, as it does there. (A
			// shutdown ends the wait, not the termination.)
			_ = p.relists.waitListedSince(ctx, stoppedAt)
		}
	}
	if l.state != podTerminated {
		return false, fmt.Errorf("terminating a pod that is %s", l.state)
	}
	if !l.volumesTornDown {
		// As the kubelet's SyncTerminatedPod, for every terminated pod: its containers stay (for
		// logs and status) until it is deleted, its volumes go at once.
		if err := p.tearDownVolumes(rec.uid); err != nil {
			return false, fmt.Errorf("terminated pod: %w", err)
		}
		// Then its user namespace's IDs are free again (the kubelet's SyncTerminatedPod).
		p.userns.release(rec.uid)
		rec.mu.Lock()
		rec.lifecycle.volumesTornDown = true
		rec.mu.Unlock()
		// Then, as SyncTerminatedPod, the pod's cgroup (pcm.Destroy).
		p.removePodCgroup(rec.uid)
		if l.reason == terminationEvicted {
			p.removeEvictedContainers(ctx, pod, rec)
		}
	}
	if !removal {
		return false, nil
	}
	if err := p.removeTerminated(ctx, rec, pod, rt, stoppedAt); err != nil {
		return false, err
	}
	return true, nil
}

// removeEvictedContainers removes the stopped containers of an evicted pod from the runtime, as
// the kubelet's container deletor removes all of them once the pod worker says an evicted pod's
// content can go (kubelet.go cleanUpContainersInPod on the ContainerDied events of its kill,
// pod_workers.go ShouldPodContentBeRemoved): their logs are gone, the pod's status keeps their
// ends. The sandboxes stay until the pod is deleted, as the kubelet's GC keeps them.
func (p *Provider) removeEvictedContainers(ctx context.Context, pod *v1.Pod, rec *podRecord) {
	rt, err := p.runtime.inspectPod(ctx, string(rec.uid))
	if err != nil {
		p.podLog(pod).WithError(err).Warn("reading the evicted pod's containers to remove them")
		return
	}
	for _, c := range rt.Containers {
		if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			continue
		}
		if err := cri.IgnoreNotFound(p.runtime.RemoveContainer(ctx, c.ID)); err != nil {
			p.podLog(pod).WithError(err).WithField("container", c.Name).Warn("removing a container of the evicted pod")
		}
	}
}

// removeTerminated removes a deleted pod that has terminated: the status manager's final status
// (containers that never ended reported terminated, a terminal phase) and the pod's removal from
// the API, in its turn; then the pod's containers, sandboxes, logs and per-pod files. rt is the
// pod's runtime state once it stopped, and stoppedAt the end of its terminating step (its
// terminal status set); rt is nil when it was stopped earlier.
//
// The runtime's objects go after the API's pod, as on the kubelet: its status manager deletes
// the pod once SyncTerminatedPod has torn the volumes and the cgroup down (status_manager.go
// canBeDeleted), and the dead containers and sandboxes are removed afterwards, by the container
// deletor on the pod's ContainerDied events (kubelet.go cleanUpContainersInPod) and the
// container GC (kuberuntime_gc.go evictSandboxes). Removing them first made the deletion, and
// the time the final status was visible, wait for the runtime's removals: seconds on a loaded
// machine for a crash-looping pod's dead instances (issue 15).
func (p *Provider) removeTerminated(ctx context.Context, rec *podRecord, pod *v1.Pod, rt *podRuntime, stoppedAt time.Time) error {
	log := p.podLog(pod)
	if rt == nil {
		var err error
		if rt, err = p.runtime.inspectPod(ctx, string(rec.uid)); err != nil {
			return fmt.Errorf("reading the pod's state from the runtime before removing it: %w", err)
		}
		stoppedAt = time.Now()
	}
	rec.mu.Lock()
	spec, deletion := rec.pod, *rec.lifecycle.deletion
	rec.mu.Unlock()
	if deletion.inAPI && !deletion.removedFromAPI {
		var final *v1.PodStatus
		if spec != nil {
			// The status the pod leaves the API with. It is reported in the pod's turn (below),
			// as the kubelet's SyncTerminatedPod writes it one relist after the containers
			// stopped: until then the status stays SyncTerminatingPod's, written once nothing
			// ran (a container that never started still waiting in a Pending pod, its sandbox
			// not ready). Reported at once, it replaced that one before anything saw it.
			st := p.computeStatus(rec, spec, rt, statusFinal)
			final = &st
		}
		// In the worker, so that the pod's record stays (and virtual-kubelet's force deletions
		// are still handed over to it) until the pod is gone from the API and the runtime.
		p.removeFromAPIInTurn(ctx, stoppedAt, func(ctx context.Context) {
			if final != nil {
				p.setStatus(rec, spec, *final)
			}
			p.removeFromAPI(ctx, pod, final)
		})
		rec.mu.Lock()
		rec.lifecycle.deletion.removedFromAPI = true
		rec.mu.Unlock()
	}
	for _, c := range rt.Containers {
		if err := cri.IgnoreNotFound(p.runtime.RemoveContainer(ctx, c.ID)); err != nil {
			return fmt.Errorf("removing container %s: %w", c.Name, err)
		}
	}
	for _, sb := range rt.Sandboxes {
		if err := cri.IgnoreNotFound(p.runtime.RemovePodSandbox(ctx, sb.ID)); err != nil {
			return fmt.Errorf("removing pod sandbox %s: %w", sb.ID, err)
		}
	}
	// The pod's logs go with it, as the kubelet removes the log directory of a deleted pod.
	if err := os.RemoveAll(translate.PodLogDir(p.cfg.PodLogRoot, pod)); err != nil {
		log.WithError(err).Warn("removing the pod's log directory")
	}
	if err := removePodContainerDirs(p.cfg.RootDir, string(rec.uid)); err != nil {
		log.WithError(err).Warn("removing the pod's termination message files")
	}
	log.Info("pod terminated and removed from the runtime")
	p.probes.RemovePod(rec.uid)
	return rec.transition(lifecycleChange{to: podRemoved})
}

// removeFromAPI ends a terminated pod's life in the API through the status writer
// (status.RemoveTerminated: the final status, then a grace-0 deletion of that UID only).
func (p *Provider) removeFromAPI(ctx context.Context, pod *v1.Pod, final *v1.PodStatus) {
	if p.cfg.Pods == nil {
		return
	}
	if err := status.RemoveTerminated(ctx, p.cfg.Pods, pod, final); err != nil {
		p.podLog(pod).WithError(err).Warn("removing the terminated pod from the API")
	}
}
