package provider

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-cri/vk-cri/cri"
	"github.com/vk-cri/vk-cri/logrotate"
	"github.com/vk-cri/vk-cri/provider/podspec"
	"github.com/vk-cri/vk-cri/provider/translate"
)

// pullTimeout bounds one image pull; the runtime request timeout is too short for large images.
const pullTimeout = 15 * time.Minute

// execute carries out the actions of one sync. It returns the reason each container that could
// not start is waiting, and how soon to retry when something failed.
func (p *Provider) execute(ctx context.Context, rec *podRecord, pod *v1.Pod, rt *podRuntime, a podActions) (map[string]waitingReason, time.Duration) {
	log := p.podLog(pod)
	reasons := map[string]waitingReason{}
	for name, r := range a.Backoff {
		reasons[name] = r
		p.containerEvent(pod, name, podspec.IsInitContainer(pod, name), v1.EventTypeWarning, eventBackOff, "Back-off restarting failed container %s in pod %s_%s(%s)", name, pod.Name, pod.Namespace, pod.UID)
	}
	grace := containerKillGrace(pod)

	if a.KillPod {
		p.killContainers(ctx, pod, rt.Containers, grace, true)
		p.stopSandboxes(ctx, pod, rt)
		if !a.CreateSandbox {
			return reasons, 0
		}
	}
	for _, k := range a.ContainersToKill {
		g := grace
		if k.Grace != nil {
			g = *k.Grace
		}
		p.stopContainer(ctx, pod, stopRequest{ID: k.ID, Name: k.Name, Grace: g, Message: k.killMessage(), Events: true})
		if k.Keep || k.Reason != killNotStarted {
			// A stopped instance stays, as with the kubelet, for the last state and previous logs
			// of its successor; removeDeadInstances clears it later.
			continue
		}
		if err := cri.IgnoreNotFound(p.runtime.RemoveContainer(ctx, k.ID)); err != nil {
			log.WithError(err).WithField("container", k.Name).Warn("removing replaced container")
		}
	}
	var retry time.Duration
	if len(a.ContainersToResize) > 0 || restartsForResize(a) {
		if err := p.resizeContainers(ctx, rec, pod, a.ContainersToResize); err != nil {
			p.resizeFailed(rec, pod, err)
			retry = backoffInitial
		}
	}
	if !a.CreateSandbox && a.SandboxID == "" {
		return reasons, retry
	}

	sbCfg, err := p.sandboxConfigFor(pod, a.SandboxAttempt, a.CreateSandbox)
	if err != nil {
		log.WithError(err).Warn("pod sandbox configuration")
		// As the kubelet, the event only when the sandbox was to be made: a running pod whose
		// RuntimeClass went away starts nothing new, without an event (ConfigPodSandbox fails).
		if a.CreateSandbox {
			p.podEvent(pod, v1.EventTypeWarning, eventFailedSandbox, "Failed to create pod sandbox: %v", err)
		}
		return reasons, backoffInitial
	}
	sandboxID := a.SandboxID
	if a.CreateSandbox {
		if err := p.ensurePodCgroup(pod); err != nil {
			log.WithError(err).Warn("creating the pod's cgroup")
			return reasons, backoffInitial
		}
		if a.SandboxAttempt > 0 {
			p.podEvent(pod, v1.EventTypeNormal, eventSandboxChanged, "Pod sandbox changed, it will be killed and re-created.")
		}
		id, err := p.runSandbox(ctx, pod, sbCfg)
		if err != nil {
			log.WithError(err).Warn("creating pod sandbox")
			p.podEvent(pod, v1.EventTypeWarning, eventFailedSandbox, "Failed to create pod sandbox: %v", err)
			return reasons, backoffInitial
		}
		sandboxID = id
		log.WithField("sandbox", id).Info("pod sandbox ready")
		// The sandbox being ready is a step of its own in the pod's status.
		if fresh, err := p.runtime.inspectPod(ctx, string(rec.uid)); err == nil {
			rt = fresh
			p.reportStatus(rec, pod, rt)
		}
	}

	start := func(c *v1.Container, isInit bool) {
		if r, err := p.startContainer(ctx, pod, c, isInit, sandboxID, sbCfg, rt); err != nil {
			if r.Reason != "" {
				reasons[c.Name] = r
			}
			log.WithError(err).WithFields(map[string]any{"container": c.Name, "reason": r.Reason}).Warn("container did not start")
			retry = minPositive(retry, backoffInitial)
		}
	}
	// Ephemeral containers first, as the kubelet starts them: a failing init container must not
	// keep a debugger out.
	for _, i := range a.EphemeralToStart {
		start(ephemeralAsContainer(&pod.Spec.EphemeralContainers[i]), false)
	}
	if a.InitToStart >= 0 {
		start(&pod.Spec.InitContainers[a.InitToStart], true)
	}
	for _, i := range a.SidecarsToStart {
		start(&pod.Spec.InitContainers[i], true)
	}
	for _, i := range a.ContainersToStart {
		start(&pod.Spec.Containers[i], false)
	}
	return reasons, retry
}

// failedEvent records a container's Failed event, unless the sync was interrupted (the pod is
// being deleted): the failure is then vk-cri's own doing, and the kubelet records none.
func (p *Provider) failedEvent(ctx context.Context, pod *v1.Pod, name string, isInit bool, format string, args ...any) {
	if ctx.Err() != nil {
		return
	}
	p.containerEvent(pod, name, isInit, v1.EventTypeWarning, eventFailed, format, args...)
}

// runSandbox runs the pod's sandbox with the runtime handler of its RuntimeClass. As with the
// kubelet's createPodSandbox, an error is the runtime's own (e.g. `no runtime for "x" is
// configured` for a handler it does not have), which the FailedCreatePodSandBox event shows as is.
func (p *Provider) runSandbox(ctx context.Context, pod *v1.Pod, cfg *runtimeapi.PodSandboxConfig) (string, error) {
	// The runtime writes container logs below this directory but does not create it.
	if err := os.MkdirAll(cfg.LogDirectory, 0o755); err != nil {
		return "", fmt.Errorf("creating pod log directory: %w", err)
	}
	handler, err := p.runtimeHandlerFor(pod)
	if err != nil {
		return "", err
	}
	if handler != "" {
		p.podLog(pod).WithField("translate.RuntimeHandler", handler).Info("running pod with runtime handler")
	}
	return p.runtime.RunPodSandbox(ctx, cfg, handler)
}

// startContainer pulls the image as the policy says, then creates and starts one container.
// On failure it returns the waiting reason the container's status shows.
func (p *Provider) startContainer(ctx context.Context, pod *v1.Pod, c *v1.Container, isInit bool, sandboxID string, sbCfg *runtimeapi.PodSandboxConfig, rt *podRuntime) (waitingReason, error) {
	imageRef, err := p.ensureImage(ctx, pod, c, isInit, sbCfg)
	if err != nil {
		r := waitingReason{Reason: cri.ReasonErrImagePull, Message: err.Error()}
		var ie *cri.ImageError
		if errors.As(err, &ie) {
			r = waitingReason{Reason: ie.Reason, Message: ie.Message}
		}
		// Like the kubelet, every image failure (back-off and pull policy Never included) ends
		// with a Failed event naming the waiting reason, after the image manager's own event.
		p.failedEvent(ctx, pod, c.Name, isInit, "Error: %s", r.Reason)
		return r, err
	}

	restartCount := 0
	prev := rt.latest(c.Name)
	if prev != nil {
		restartCount = prev.RestartCount + 1
	}
	cfg, err := p.prepareContainer(ctx, pod, c, imageRef, restartCount, rt)
	if err != nil {
		p.failedEvent(ctx, pod, c.Name, isInit, "Error: %v", err)
		return waitingReason{Reason: reasonCreateConfig, Message: err.Error()}, err
	}
	// The container's log directory (<pod log dir>/<name>), made here as the kubelet's
	// generateContainerConfig makes it (kuberuntime_container.go): containerd creates a log
	// path's parent itself, CRI-O's conmon does not and CreateContainer fails without it.
	if err := os.MkdirAll(filepath.Join(sbCfg.GetLogDirectory(), filepath.Dir(cfg.GetLogPath())), 0o755); err != nil {
		err = fmt.Errorf("create container log directory for container %s failed: %w", c.Name, err)
		p.failedEvent(ctx, pod, c.Name, isInit, "Error: %v", err)
		return waitingReason{Reason: reasonCreateConfig, Message: err.Error()}, err
	}
	msgMount, err := terminationMessageMount(p.cfg.RootDir, pod, c)
	if err != nil {
		// The kubelet starts the container without the file then, and so does vk-cri.
		p.podLog(pod).WithError(err).WithField("container", c.Name).Warn("termination message file")
	} else if msgMount != nil {
		cfg.Mounts = append(cfg.Mounts, msgMount)
		// In a pod user namespace, this mount is idmapped like the others.
		translate.IDMapMounts(cfg)
	}
	if err := ctx.Err(); err != nil {
		return waitingReason{}, fmt.Errorf("not creating container: %w", err)
	}
	// A deletion interrupts a sync between steps, never a container half-way through its start
	// (it would be left created, or exited with StartError): the runtime's own deadline bounds it.
	rctx := context.WithoutCancel(ctx)
	id, err := p.runtime.CreateContainer(rctx, sandboxID, cfg, sbCfg)
	if err != nil {
		why := runtimeCallFailure(reasonCreateContainer, err)
		p.failedEvent(ctx, pod, c.Name, isInit, "%s", failedEventMessage(why))
		return why, fmt.Errorf("CreateContainer: %w", err)
	}
	p.containerEvent(pod, c.Name, isInit, v1.EventTypeNormal, eventCreated, "Container created")
	if _, resizable := specAllocation(pod)[c.Name]; resizable {
		// What this instance runs with, as allocated: its resizes start from there.
		if err := p.alloc.setActuated(pod.UID, c.Name, c.Resources); err != nil {
			p.podLog(pod).WithError(err).WithField("container", c.Name).Warn("recording the container's resources")
		}
	}
	if prev != nil && prev.State == runtimeapi.ContainerState_CONTAINER_EXITED {
		p.restarts.Restarted(backoffKey(pod, c.Name), prev.FinishedAt)
	}
	if err := p.runtime.StartContainer(rctx, id); err != nil {
		why := runtimeCallFailure(reasonRunContainer, err)
		p.failedEvent(ctx, pod, c.Name, isInit, "%s", failedEventMessage(why))
		return why, fmt.Errorf("StartContainer: %w", err)
	}
	p.containerEvent(pod, c.Name, isInit, v1.EventTypeNormal, eventStarted, "Container started")
	p.podLog(pod).WithFields(map[string]any{"container": c.Name, "id": id, "restartCount": restartCount}).Info("container started")
	p.removeOldInstances(ctx, pod, rt, c.Name)
	if r, err := p.runPostStart(ctx, pod, c, isInit, id); err != nil {
		return r, err
	}
	return waitingReason{}, nil
}

// runtimeCallFailure is the waiting reason of a container whose CreateContainer or
// StartContainer call failed: the runtime's message, without gRPC's framing, as the kubelet
// shows it.
func runtimeCallFailure(reason string, err error) waitingReason {
	return waitingReason{Reason: reason, Message: cri.Message(err)}
}

// failedEventMessage is the message of the Failed event of a container that could not be
// created or started.
func failedEventMessage(why waitingReason) string {
	return "Error: " + why.Message
}

// postStartTimeout bounds a postStart hook. The kubelet waits for one without limit (until the
// pod is deleted); vk-cri gives up after this long and treats the hook as failed.
const postStartTimeout = 10 * time.Minute

// runPostStart runs the container's postStart hook right after its start. The sync waits for it,
// so the container is not reported running before it returns; a failed hook gets the container
// killed, and it waits with PostStartHookError, as with the kubelet.
func (p *Provider) runPostStart(ctx context.Context, pod *v1.Pod, c *v1.Container, isInit bool, id string) (waitingReason, error) {
	if c.Lifecycle == nil || c.Lifecycle.PostStart == nil {
		return waitingReason{}, nil
	}
	hctx, cancel := context.WithTimeout(ctx, postStartTimeout)
	defer cancel()
	msg, err := p.hooks.run(hctx, hookTarget{Pod: pod, Container: c, ContainerID: id}, c.Lifecycle.PostStart)
	if err == nil {
		return waitingReason{}, nil
	}
	p.podLog(pod).WithError(err).WithField("container", c.Name).Warn("postStart hook failed")
	// Not the hook's message: it may hold what the command printed.
	p.containerEvent(pod, c.Name, isInit, v1.EventTypeWarning, eventFailedPostStartHook, "PostStartHook failed")
	p.stopContainer(ctx, pod, stopRequest{ID: id, Name: c.Name, Grace: containerKillGrace(pod), Message: eventFailedPostStartHook, Events: true})
	return waitingReason{Reason: reasonPostStartHookError, Message: msg}, fmt.Errorf("postStart hook: %w", err)
}

// removeOldInstances keeps one dead instance of a container (for its last state and logs) and
// removes older ones, as the kubelet's container garbage collection does.
func (p *Provider) removeOldInstances(ctx context.Context, pod *v1.Pod, rt *podRuntime, name string) {
	insts := rt.instances(name)
	for i, old := range insts {
		if i == 0 || old.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			continue
		}
		if err := cri.IgnoreNotFound(p.runtime.RemoveContainer(ctx, old.ID)); err != nil {
			p.podLog(pod).WithError(err).WithField("container", name).Warn("removing old container instance")
			continue
		}
		// Its log goes with it, rotated files included, as the kubelet's container GC does.
		logPath := filepath.Join(translate.PodLogDir(p.cfg.PodLogRoot, pod), translate.ContainerLogPath(name, old.RestartCount))
		if err := logrotate.RemoveLogs(logPath); err != nil {
			p.podLog(pod).WithError(err).WithField("container", name).Warn("removing the log of an old container instance")
		}
	}
}

// ensureImage makes the container's image available according to its pull policy and returns
// the image ID to create the container from.
func (p *Provider) ensureImage(ctx context.Context, pod *v1.Pod, c *v1.Container, isInit bool, sbCfg *runtimeapi.PodSandboxConfig) (string, error) {
	if _, err := cri.WithDefaultTag(c.Image); err != nil {
		msg := fmt.Sprintf("Failed to apply default image tag %q: %v", c.Image, err)
		p.containerEvent(pod, c.Name, isInit, v1.EventTypeWarning, eventInspectFailed, "%s", msg)
		return "", &cri.ImageError{Reason: cri.ReasonInvalidImageName, Message: msg, Err: err}
	}
	policy := c.ImagePullPolicy
	if policy == "" {
		policy = cri.DefaultPullPolicy(c.Image)
	}
	img, err := p.rt.ImagePresence(ctx, c.Image)
	if err != nil {
		// The kubelet names the image reference it did not get, an empty one, in this message.
		msg := fmt.Sprintf("Failed to inspect image %q: %v", "", err)
		p.containerEvent(pod, c.Name, isInit, v1.EventTypeWarning, eventInspectFailed, "%s", msg)
		return "", &cri.ImageError{Reason: cri.ReasonImageInspectError, Message: msg, Err: err}
	}
	present := img != nil
	if !cri.NeedsPull(policy, present) {
		if !present {
			msg := fmt.Sprintf("Container image %q is not present with pull policy of Never", c.Image)
			p.containerEvent(pod, c.Name, isInit, v1.EventTypeWarning, eventErrImageNeverPull, "%s", msg)
			return "", &cri.ImageError{Reason: cri.ReasonErrImageNeverPull, Message: msg}
		}
		p.containerEvent(pod, c.Name, isInit, v1.EventTypeNormal, eventPulled, "Container image %q already present on machine", c.Image)
		return img.Id, nil
	}

	key := string(pod.UID) + "/" + c.Image
	if _, _, in := p.pulls.InBackoff(key, time.Now()); in {
		msg := fmt.Sprintf("Back-off pulling image %q", c.Image)
		p.containerEvent(pod, c.Name, isInit, v1.EventTypeNormal, eventBackOff, "%s", msg)
		return "", &cri.ImageError{Reason: cri.ReasonImagePullBackOff, Message: msg}
	}
	p.containerEvent(pod, c.Name, isInit, v1.EventTypeNormal, eventPulling, "Pulling image %q", c.Image)
	start := time.Now()
	pctx, cancel := context.WithTimeout(ctx, pullTimeout)
	defer cancel()
	ref, err := p.pullImage(pctx, pod, c.Image, sbCfg)
	if err != nil {
		p.pulls.Restarted(key, time.Now())
		p.failedEvent(ctx, pod, c.Name, isInit, "Failed to pull image %q: %v", c.Image, err)
		return "", &cri.ImageError{Reason: cri.ReasonErrImagePull, Message: fmt.Sprintf("failed to pull image %q: %v", c.Image, err), Err: err}
	}
	took := time.Since(start)
	size := uint64(0)
	if img, err := p.rt.ImagePresence(ctx, ref); err == nil && img != nil {
		size = img.GetSize()
	}
	p.containerEvent(pod, c.Name, isInit, v1.EventTypeNormal, eventPulled, "Successfully pulled image %q in %v (%v including waiting). Image size: %d bytes.", c.Image, took.Round(time.Millisecond), took.Round(time.Millisecond), size)
	return ref, nil
}
