package provider

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/vk-cri/vk-cri/provider/status"
)

// runtimeRetry is how soon a sync that failed (the runtime could not be read, a termination
// step failed) is tried again.
const runtimeRetry = 2 * time.Second

// retryAfter is the one back-off policy of the pod workers: how soon a sync that returned err is
// tried again. Every error is the runtime's or the node's, not the pod's (a container that
// cannot start waits in its own back-off, decided by computePodActions).
func retryAfter(error) time.Duration {
	return runtimeRetry
}

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
			operation := workerOperation(firstSync && rec.pod != nil, rec.lifecycle.deletion != nil)
			state := rec.lifecycle.state
			rec.mu.Unlock()
			start := time.Now()
			next, gone, err := p.syncPod(ctx, rec)
			p.cfg.Metrics.PodWorker(operation, time.Since(start))
			firstSync = false
			if err != nil && ctx.Err() == nil {
				next = retryAfter(err)
				p.log.WithError(err).WithFields(map[string]any{"pod": rec.identity.Namespace + "/" + rec.identity.Name,
					"uid": rec.uid, "state": state, "retryIn": next}).Warn("pod sync failed")
			}
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

// syncPod is one turn of the pod's worker. A pod that is syncing is brought one step closer
// to its spec and its status reported; a pod that is terminating or deleted, or terminated with
// its volumes still there, goes on along the one termination path (terminate). It returns when
// to look again and whether the pod is gone for good; an error is handed to the worker, which
// decides when to try again (retryAfter).
func (p *Provider) syncPod(ctx context.Context, rec *podRecord) (next time.Duration, gone bool, err error) {
	rec.mu.Lock()
	pod := rec.pod
	l := rec.lifecycle
	// A sync asked for by a readiness verdict only reports it (the kubelet updates the status
	// without a sync, so it probes nothing more for it).
	probeWake := rec.probeWake
	why := syncTrigger{Relist: rec.relistWake, Probe: probeWake}
	rec.probeWake, rec.relistWake = false, false
	rec.mu.Unlock()

	switch {
	case pod == nil && l.deletion == nil:
		// Found in the runtime at start-up; wait until the API claims it or it is deleted.
		return p.cfg.ResyncPeriod, false, nil
	case l.deletion != nil:
		// The kubelet's pod worker begins a termination in its turn; an orphan it kills at once,
		// outside the pod workers' cadence (it has no pod to sync).
		if !l.orphan() {
			if err := p.awaitTerminationTurn(ctx, rec); err != nil {
				return 0, false, fmt.Errorf("waiting for the termination's turn: %w", err)
			}
		}
		gone, err := p.terminate(ctx, rec)
		return 0, gone, err
	case l.state == podTerminating:
		// An eviction (or a termination an error interrupted): the pod stays, terminated.
		_, err := p.terminate(ctx, rec)
		return p.cfg.ResyncPeriod, false, err
	case l.state == podTerminated && !l.volumesTornDown:
		// Terminal in the API already when vk-cri (re)started, or a teardown that failed.
		if _, err := p.terminate(ctx, rec); err != nil {
			return 0, false, err
		}
	}
	finished := l.state == podTerminated
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
	syncStart := time.Now()
	rt, err := p.runtime.inspectPod(ctx, string(rec.uid))
	if err != nil {
		return 0, false, fmt.Errorf("reading the pod's state from the runtime: %w", err)
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
	if stop, retry := p.rejectIfInadmissible(ctx, rec, pod, rt); stop {
		if l := rec.lifecycleNow(); l.state == podTerminated && l.deletion == nil {
			// Nothing ran; the one termination path releases what the pod holds.
			_, err = p.terminate(ctx, rec)
		}
		return minPositive(next, retry), false, err
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
			p.setStatus(rec, pod, p.computeStatus(rec, pod, rt, statusLive))
			return retryIn, false, nil
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
			failure := &podFailure{Reason: reasonDeadlineExceeded, Message: messageDeadlineExceeded}
			if err := rec.transition(lifecycleChange{to: podTerminating, reason: terminationDeadlineExceeded, failure: failure}); err != nil {
				// A deletion or an eviction came first; its termination goes on next.
				return next, false, nil
			}
			_, err := p.terminate(ctx, rec)
			return next, false, err
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
			st := p.computeStatus(rec, pod, rt, statusLive)
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
			// A crash of an instance that ran for less than a relist reaches the kubelet's pod
			// worker twice, and it shows CrashLoopBackOff one relist later (backoff_report.go).
			if showsBackoffNextRelist(actions.Backoff, previous, rt, p.cfg.RelistPeriod) {
				p.syncAfterNextRelist(p.runCtx, rec)
			}
		}
		if actions.changesRuntime() {
			before := rt
			if rt, err = p.runtime.inspectPod(ctx, string(rec.uid)); err != nil {
				return 0, false, fmt.Errorf("reading the pod's state from the runtime: %w", err)
			}
			rec.mu.Lock()
			rec.reasons = statusReasons(before, rt, rec.reasons, lastReasons)
			rec.mu.Unlock()
			// As the kubelet's next sync, which the resize asks for at once, finds it done.
			p.trackResizeProgress(rec, apod, rt)
		}
	}
	status := p.computeStatus(rec, pod, rt, stageOf(finished))
	if !finished && isTerminalPhase(status.Phase) {
		// The kubelet stops a finished pod's sandbox before it reports the terminal phase (the
		// API accepts no status change after it); its containers stay for logs and status. Until
		// then it reports the last phase with the conditions of the terminal one.
		p.setStatus(rec, pod, interimStatus(status, rec.view().Status))
		// The one termination path stops its sandbox and tears its volumes down; its containers
		// stay for logs. A deletion or an eviction that came meanwhile ends it instead.
		if err := rec.transition(lifecycleChange{to: podTerminating, reason: terminationFinished}); err == nil {
			if _, err := p.terminate(ctx, rec); err != nil {
				return 0, false, err
			}
		}
		if fresh, err := p.runtime.inspectPod(ctx, string(rec.uid)); err == nil {
			rt = fresh
		}
		status = p.computeStatus(rec, pod, rt, statusTerminal)
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
	p.removeDeadInstances(pod, rt)
	return next, false, nil
}

// changesRuntime reports whether executing the actions touched the runtime.
func (a podActions) changesRuntime() bool {
	return a.KillPod || a.CreateSandbox || a.InitToStart >= 0 || len(a.SidecarsToStart) > 0 ||
		len(a.ContainersToStart) > 0 || len(a.ContainersToKill) > 0 || len(a.EphemeralToStart) > 0 ||
		len(a.ContainersToResize) > 0
}

// reportStatus computes the status of a pod that may still run and publishes it when it changed.
func (p *Provider) reportStatus(rec *podRecord, pod *v1.Pod, rt *podRuntime) {
	p.setStatus(rec, pod, p.computeStatus(rec, pod, rt, statusLive))
}

// statusStage is how far in its life the status computeStatus generates describes the pod.
type statusStage int

const (
	// statusLive: the pod may still run (or start) containers.
	statusLive statusStage = iota
	// statusTerminal: nothing of the pod will run again; it has no resize to wait for.
	statusTerminal
	// statusFinal: terminal, as the kubelet's status manager writes it last before the pod's
	// removal from the API (containers that never ended reported terminated, a terminal phase).
	statusFinal
)

// stageOf is statusTerminal for a pod that ended, statusLive otherwise.
func stageOf(ended bool) statusStage {
	if ended {
		return statusTerminal
	}
	return statusLive
}

// computeStatus generates the pod's status from the runtime's state and the last status.
func (p *Provider) computeStatus(rec *podRecord, pod *v1.Pod, rt *podRuntime, stage statusStage) v1.PodStatus {
	terminal, final := stage >= statusTerminal, stage == statusFinal
	rec.mu.Lock()
	in := pod.DeepCopy()
	if rec.status != nil {
		in.Status = *rec.status.DeepCopy()
	}
	if rec.apiConditions != nil {
		in.Status.Conditions = status.MergeConditions(rec.apiConditions, in.Status.Conditions)
	}
	l := rec.lifecycle
	reasons, evicted, failure, finished := rec.reasons, l.eviction, l.failure, l.endedInPlace()
	deleting := l.deletion != nil && l.deletion.inAPI
	seen := pod.Status
	if l.deletion != nil && l.deletion.seen != nil {
		seen = *l.deletion.seen
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
		SupportsRRO: p.supportsRecursiveReadOnly(in),

		ResizeConditions: resize,
	})
	if evicted != nil {
		applyEviction(&st, evicted)
	}
	if finished {
		st.EphemeralContainerStatuses = reportedEphemeral(st.EphemeralContainerStatuses, in.Status.EphemeralContainerStatuses)
	}
	if final {
		st = status.FinalStatus(pod, seen, st)
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
