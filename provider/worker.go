package provider

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// runtimeRetry is how soon a sync that could not reach the runtime is tried again.
const runtimeRetry = 2 * time.Second

// startWorker runs the pod's worker: one goroutine per pod, so that one slow pod (an image
// pull, a long grace period) never holds up another.
func (p *Provider) startWorker(rec *podRecord) {
	go func() {
		defer close(rec.done)
		ctx := p.runCtx
		timer := time.NewTimer(0)
		defer timer.Stop()
		firstSync := true
		for {
			select {
			case <-ctx.Done():
				return
			case <-rec.wake:
			case <-timer.C:
			}
			rec.mu.Lock()
			operation := workerOperation(firstSync && rec.pod != nil, rec.deleting)
			rec.mu.Unlock()
			start := time.Now()
			next, gone := p.syncPod(ctx, rec)
			p.cfg.Metrics.PodWorker(operation, time.Since(start))
			firstSync = false
			if gone {
				p.pods.remove(rec.uid)
				if err := p.alloc.remove(rec.uid); err != nil {
					p.log.WithError(err).WithField("uid", rec.uid).Warn("forgetting the pod's allocation")
				}
				// Its resources are free: resizes waiting for them are tried again.
				p.retryPendingResizes()
				return
			}
			if !timer.Stop() {
				select {
				case <-timer.C:
				default:
				}
			}
			timer.Reset(next)
		}
	}()
}

// syncPod brings one pod one step closer to its spec and reports its status. It returns when
// to look again, and whether the pod is gone for good.
func (p *Provider) syncPod(ctx context.Context, rec *podRecord) (next time.Duration, gone bool) {
	rec.mu.Lock()
	pod := rec.pod
	deleting, grace, finished, evicted := rec.deleting, rec.gracePeriod, rec.finished, rec.evicted
	// A sync asked for by a readiness verdict only reports it (the kubelet updates the status
	// without a sync, so it probes nothing more for it).
	probeWake := rec.probeWake
	why := syncTrigger{Relist: rec.relistWake, Probe: probeWake}
	rec.probeWake, rec.relistWake = false, false
	orphan := rec.orphan
	rec.mu.Unlock()

	if pod == nil && !deleting {
		// Found in the runtime at start-up; wait until the API claims it or it is deleted.
		return p.cfg.ResyncPeriod, false
	}
	if deleting {
		// The kubelet's pod worker begins a termination in its turn; an orphan it kills at once,
		// outside the pod workers' cadence (it has no pod to sync).
		if !orphan {
			if err := p.awaitTerminationTurn(ctx, rec); err != nil {
				return runtimeRetry, false
			}
		}
		return p.terminatePod(ctx, rec, grace)
	}
	if evicted != nil && !finished {
		return p.executeEviction(ctx, rec, pod, evicted)
	}
	// A deletion interrupts this sync (a postStart hook, an image pull), as with the kubelet.
	ctx, cancel := context.WithCancel(ctx)
	rec.mu.Lock()
	rec.cancelSync = cancel
	rec.mu.Unlock()
	defer func() {
		rec.mu.Lock()
		rec.cancelSync = nil
		rec.mu.Unlock()
		cancel()
	}()
	log := p.podLog(pod)
	syncStart := time.Now()
	rt, err := p.inspector.inspectPod(ctx, string(rec.uid))
	if err != nil {
		log.WithError(err).Warn("cannot read pod state from the runtime")
		return runtimeRetry, false
	}
	rec.mu.Lock()
	turn := listedSince(p.relists.last(), rec.cadence.lastSyncEnd)
	probeRequested := probeWake || !rec.cadence.probeSyncSince.IsZero()
	probeAfterStart := rec.cadence.probeSyncProbes
	kind := classifySync(rec.cadence, turn, why, rt.states())
	rec.mu.Unlock()
	acted := false
	defer func() {
		var states map[string]string
		if rt != nil {
			states = rt.states()
		}
		rec.mu.Lock()
		rec.cadence = rec.cadence.afterSync(kind, syncStart, time.Now(), acted, states)
		rec.mu.Unlock()
	}()
	next = p.cfg.ResyncPeriod
	if p.rejectIfInadmissible(rec, pod, rt) {
		return next, false
	}
	// The pod as allocated: what its containers are configured and resized with (a resize
	// that waits for resources changes nothing yet).
	apod := pod
	if !finished {
		apod = p.allocate(rec, pod, rt)
	}
	if !finished && p.cfg.Objects != nil {
		// Like the kubelet, on each sync: the objects the pod refers to are followed by watches
		// from now on, and env, volumes and pull secrets read them from there.
		p.cfg.Objects.RegisterPod(pod)
	}
	// Like the kubelet, nothing starts before every volume is there; volumes already set up are
	// refreshed on each sync, which carries ConfigMap, Secret and label changes into the pod.
	if !finished {
		if blocked, retryIn := p.setUpVolumes(ctx, pod); blocked {
			p.setStatus(rec, pod, p.computeStatus(rec, pod, rt, false, false))
			return retryIn, false
		}
	}
	if !finished {
		rec.mu.Lock()
		var started *metav1.Time
		if rec.status != nil {
			started = rec.status.StartTime
		}
		rec.mu.Unlock()
		exceeded, left := activeDeadline(pod, started, time.Now())
		if exceeded {
			p.failPod(ctx, rec, pod, rt, podFailure{Reason: reasonDeadlineExceeded, Message: messageDeadlineExceeded})
			return next, false
		}
		next = minPositive(next, left)
		p.probes.AddPod(pod)
		p.trackResizeProgress(rec, apod, rt)
		actions := computePodActions(apod, rt, p.restarts, p.probes)
		acted = actions.changesRuntime()
		if acted {
			// Like the kubelet, report the state the sync starts from before acting on it, so that
			// watchers see each step (ContainerCreating, sandbox ready, running). A pod whose
			// regular containers are done while others still run (sidecars, ephemeral
			// containers, killed by this sync) keeps its phase until they have stopped.
			st := p.computeStatus(rec, pod, rt, false, false)
			if isTerminalPhase(st.Phase) {
				st = interimStatus(st, rec.view().Status)
			}
			p.setStatus(rec, pod, st)
		}
		reasons, retry := p.execute(ctx, rec, apod, rt, actions)
		rec.mu.Lock()
		previous := rec.reasons
		// An ephemeral container's start failure shows at once: it is never tried again.
		rec.reasons = withEphemeralFailures(pod, actions.EphemeralToStart, previous, reasons)
		// Like the kubelet's reason cache, why a container could not start shows from the next
		// sync on: this sync's status is generated from what earlier syncs found (its status
		// after acting stands for the sync a runtime change triggers: see statusReasons).
		lastReasons := keptEphemeralReasons(pod, actions.EphemeralToStart, previous, reasons)
		rec.mu.Unlock()
		defer func() {
			rec.mu.Lock()
			rec.reasons = lastReasons
			rec.mu.Unlock()
		}()
		next = minPositive(next, retry)
		if actions.NextSync > 0 {
			// Like the kubelet's pod workers, look again when the back-off ends (a little
			// later, jittered), not before: the status shows the exit until then.
			next = minPositive(retry, backoffResync(actions.NextSync))
		}
		if actions.changesRuntime() {
			before := rt
			if rt, err = p.inspector.inspectPod(ctx, string(rec.uid)); err != nil {
				log.WithError(err).Warn("cannot read pod state from the runtime")
				return runtimeRetry, false
			}
			rec.mu.Lock()
			rec.reasons = statusReasons(before, rt, rec.reasons, lastReasons)
			rec.mu.Unlock()
			// As the kubelet's next sync, which the resize asks for at once, finds it done.
			p.trackResizeProgress(rec, apod, rt)
		}
	}
	status := p.computeStatus(rec, pod, rt, finished, false)
	if !finished && isTerminalPhase(status.Phase) {
		// The kubelet stops a finished pod's sandbox before it reports the terminal phase (the
		// API accepts no status change after it); its containers stay for logs and status. Until
		// then it reports the last phase with the conditions of the terminal one.
		p.setStatus(rec, pod, interimStatus(status, rec.view().Status))
		p.stopSandboxes(ctx, pod, rt)
		rec.mu.Lock()
		rec.finished = true
		rec.mu.Unlock()
		log.WithField("phase", status.Phase).Info("pod finished")
		p.retryPendingResizes()
		// A finished pod's volumes go at once, as with the kubelet; its containers stay for logs.
		if err := p.tearDownVolumes(rec.uid); err != nil {
			log.WithError(err).Warn("tearing down the volumes of the finished pod")
		}
		p.removePodCgroup(rec.uid)
		if fresh, err := p.inspector.inspectPod(ctx, string(rec.uid)); err == nil {
			rt = fresh
		}
		status = p.computeStatus(rec, pod, rt, true, false)
	}
	p.setStatus(rec, pod, status)
	if !acted && kind != syncReportOnly && (!probeRequested || probeAfterStart) {
		// Like the kubelet, which does this on each sync from the state it read at its start: a
		// container started by this sync is probed from the next one (the relister's), and one
		// a startup verdict made started from the sync that verdict asked for, in its turn.
		p.probes.TriggerUnready(pod, &status)
	}
	// After the status that still shows them: the relister notices the removal and the next
	// sync reports what this one found (a back-off), as the kubelet's container deletor makes it.
	p.removeDeadInstances(ctx, pod, rt)
	return next, false
}

// changesRuntime reports whether executing the actions touched the runtime.
func (a podActions) changesRuntime() bool {
	return a.KillPod || a.CreateSandbox || a.InitToStart >= 0 || len(a.SidecarsToStart) > 0 ||
		len(a.ContainersToStart) > 0 || len(a.ContainersToKill) > 0 || len(a.EphemeralToStart) > 0 ||
		len(a.ContainersToResize) > 0
}

// reportStatus computes the pod's status and publishes it when it changed.
func (p *Provider) reportStatus(rec *podRecord, pod *v1.Pod, rt *podRuntime, terminal bool) {
	p.setStatus(rec, pod, p.computeStatus(rec, pod, rt, terminal, false))
}

// computeStatus generates the pod's status from the runtime's state and the last status.
func (p *Provider) computeStatus(rec *podRecord, pod *v1.Pod, rt *podRuntime, terminal, final bool) v1.PodStatus {
	rec.mu.Lock()
	in := pod.DeepCopy()
	if rec.status != nil {
		in.Status = *rec.status.DeepCopy()
	}
	if rec.apiConditions != nil {
		in.Status.Conditions = MergeConditions(rec.apiConditions, in.Status.Conditions)
	}
	reasons, evicted, failure, finished, deleting := rec.reasons, rec.evicted, rec.failure, rec.finished, rec.deletedInAPI
	seen := pod.Status
	if rec.deletionSeen != nil {
		seen = *rec.deletionSeen
	}
	if terminal {
		// A pod that will not run again has no resize to wait for or carry out.
		rec.resize = resizeConditions{}
	}
	resize := rec.resize.list()
	rec.mu.Unlock()
	if alloc, ok := p.alloc.allocated(rec.uid); ok {
		in = withAllocation(in, alloc)
	}

	st := generatePodStatus(statusInput{
		Pod:         in,
		Runtime:     rt,
		RuntimeName: p.rt.Version.GetRuntimeName(),
		HostIPs:     p.cfg.NodeIPs,
		Reasons:     reasons,
		Terminal:    terminal,
		Deleting:    deleting,
		Failure:     failure,
		Now:         time.Now(),
		Probes:      p.probes,
		PodCgroups:  p.podCgroups.withReadback(p.podCgroupReadback(in)),
		Actuated:    p.alloc.actuated(rec.uid),

		ResizeConditions: resize,
	})
	if evicted != nil {
		applyEviction(&st, evicted)
	}
	if finished {
		st.EphemeralContainerStatuses = reportedEphemeral(st.EphemeralContainerStatuses, in.Status.EphemeralContainerStatuses)
	}
	if final {
		st = finalStatus(pod, seen, st)
	}
	return st
}

// setStatus records the pod's status and publishes it when it changed.
func (p *Provider) setStatus(rec *podRecord, pod *v1.Pod, st v1.PodStatus) {
	rec.mu.Lock()
	changed := rec.status == nil || !equality.Semantic.DeepEqual(*rec.status, st)
	started := startedRunning(rec.status, st) && !rec.firstSeen.IsZero()
	rec.status = &st
	rec.mu.Unlock()
	if started {
		p.cfg.Metrics.PodStarted(time.Since(rec.firstSeen))
	}
	if changed {
		out := pod.DeepCopy()
		out.Status = st
		p.publish(out)
	}
}

// failPod ends a pod that may not run any longer (its active deadline passed) as the kubelet
// does: an event, its containers stopped within the grace period (preStop hooks included), its
// sandbox stopped, then the Failed phase with the reason, reported once nothing runs.
func (p *Provider) failPod(ctx context.Context, rec *podRecord, pod *v1.Pod, rt *podRuntime, why podFailure) {
	log := p.podLog(pod).WithField("reason", why.Reason)
	log.Info("ending the pod")
	p.podEvent(pod, v1.EventTypeNormal, why.Reason, "%s", why.Message)
	p.killContainers(ctx, pod, rt.Containers, gracePeriod(pod), true)
	p.stopSandboxes(ctx, pod, rt)
	rec.mu.Lock()
	rec.finished = true
	rec.failure = &why
	rec.mu.Unlock()
	if fresh, err := p.inspector.inspectPod(ctx, string(rec.uid)); err == nil {
		rt = fresh
	} else {
		log.WithError(err).Warn("cannot read pod state from the runtime")
	}
	p.setStatus(rec, pod, p.computeStatus(rec, pod, rt, true, false))
}

// interimStatus is what the kubelet's status manager reports for a pod that reached a terminal
// phase before its sandbox is stopped: the terminal status with the previous phase, reason and
// message.
func interimStatus(terminal, previous v1.PodStatus) v1.PodStatus {
	st := *terminal.DeepCopy()
	st.Phase, st.Reason, st.Message = previous.Phase, previous.Reason, previous.Message
	if st.Phase == "" {
		st.Phase = v1.PodPending
	}
	return st
}

// backoffResync is when a pod waiting out a back-off is looked at again: at its end (at most a
// minute away), jittered by up to half of that, as the kubelet's pod workers requeue it.
func backoffResync(remaining time.Duration) time.Duration {
	if remaining > time.Minute {
		remaining = time.Minute
	}
	return wait.Jitter(remaining, 0.5)
}
