package provider

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-cri/vk-cri/provider/podspec"
	"github.com/vk-cri/vk-cri/provider/translate"
)

// Waiting reasons the kubelet uses for containers that are not running.
const (
	reasonContainerCreating = "ContainerCreating"
	reasonPodInitializing   = "PodInitializing"
	reasonCrashLoopBackOff  = "CrashLoopBackOff"
	reasonCreateContainer   = "CreateContainerError"
	reasonCreateConfig      = "CreateContainerConfigError"
	reasonRunContainer      = "RunContainerError"
)

// waitingReason is why a container is not running, shown as its waiting state.
type waitingReason struct {
	Reason  string
	Message string
}

// killTarget is a container instance to stop, and why ("definition changed": the Killing
// event then says "Container <name> definition changed, will be restarted").
type killTarget struct {
	ID     string
	Name   string
	Reason string
	// Message, when set, is the Killing event's whole message (a failed probe's).
	Message string
	// Grace, when set, replaces the pod's termination grace period (a probe's own).
	Grace *int64
	// Keep leaves the stopped instance in the runtime: its status is the container's last
	// state and its log the previous one.
	Keep bool
}

// killNotStarted is the reason of a kill of an instance that was created but never started: it
// is removed, not kept as a dead instance.
const killNotStarted = "container not started"

// podActions is what one sync must do for a pod. computePodActions fills it from the spec and
// the runtime's state alone, so that every lifecycle rule is table-tested without a runtime.
type podActions struct {
	// KillPod stops every container and the sandbox before anything else (sandbox gone or dead).
	KillPod bool
	// CreateSandbox asks for a new sandbox with SandboxAttempt; SandboxID is the live one otherwise.
	CreateSandbox  bool
	SandboxID      string
	SandboxAttempt uint32
	// EphemeralToStart are indexes into spec.ephemeralContainers, started before anything else.
	EphemeralToStart []int
	// InitToStart is the index of the init container to start next, or -1.
	InitToStart int
	// SidecarsToStart are indexes into spec.initContainers of sidecars to restart.
	SidecarsToStart []int
	// ContainersToStart are indexes into spec.containers.
	ContainersToStart []int
	ContainersToKill  []killTarget
	// ContainersToResize are running containers (regular ones and sidecars) whose allocated
	// resources changed and whose resize policy lets them change in place.
	ContainersToResize []resizeTarget
	// Backoff lists containers that should restart but wait out a crash-loop back-off.
	Backoff map[string]waitingReason
	// NextSync is when a back-off ends and the pod needs another look; zero if nothing waits.
	NextSync time.Duration
}

// restartBackoff tells whether a container that finished at finishedAt must still wait before
// its next start, and how long.
type restartBackoff interface {
	InBackoff(key string, finishedAt time.Time) (period, remaining time.Duration, in bool)
}

// killMessage is the Killing event's message for the target.
func (k killTarget) killMessage() string {
	if k.Message != "" {
		return k.Message
	}
	return "Container " + k.Name + " " + k.Reason + ", will be restarted"
}

func backoffKey(pod *v1.Pod, name string) string {
	return fmt.Sprintf("%s_%s_%s_%s", pod.Name, pod.Namespace, pod.UID, name)
}

func crashLoopMessage(pod *v1.Pod, name string, wait time.Duration) string {
	return fmt.Sprintf("back-off %s restarting failed container=%s pod=%s_%s(%s)", wait, name, pod.Name, pod.Namespace, pod.UID)
}

// computePodActions decides the next steps for a pod that is not being deleted.
// probes may be nil (no verdicts).
func computePodActions(pod *v1.Pod, rt *podRuntime, bo restartBackoff, probes probeResults) podActions {
	a := podActions{InitToStart: -1, Backoff: map[string]waitingReason{}}
	sb := rt.newestSandbox()

	if sb == nil || !sb.Ready {
		return sandboxActions(pod, rt, sb, a)
	}
	a.SandboxID = sb.ID
	// Like the kubelet, whether or not the pod is initialised (a debugger for a stuck init
	// container), but never in the sync that creates the sandbox.
	a.EphemeralToStart = ephemeralToStart(pod, rt)

	// Containers of older sandboxes are leftovers: they can't share the live sandbox's namespaces.
	for _, c := range rt.Containers {
		if c.SandboxID != sb.ID && c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			a.ContainersToKill = append(a.ContainersToKill, killTarget{ID: c.ID, Name: c.Name, Reason: "sandbox changed"})
		}
	}

	if !initDone(pod, rt, sb.ID, probes) {
		nextInit(pod, rt, sb.ID, bo, probes, &a)
		return a
	}
	if regularContainersDone(pod, rt) && (sidecarRunning(pod, rt) || ephemeralRunning(pod, rt)) {
		// Nothing is left for the sidecars or debuggers to serve: the kubelet stops them (within
		// the grace period) with the sandbox.
		a.KillPod, a.EphemeralToStart = true, nil
		return a
	}
	sidecarActions(pod, rt, sb.ID, bo, probes, &a)

	kept, probeKills := 0, false
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		cur := rt.latest(c.Name)
		switch {
		case cur == nil:
			a.ContainersToStart = append(a.ContainersToStart, i)
		case cur.State == runtimeapi.ContainerState_CONTAINER_RUNNING:
			if cur.Hash != translate.ContainerHash(c) {
				a.ContainersToKill = append(a.ContainersToKill, killTarget{ID: cur.ID, Name: c.Name, Reason: "definition changed"})
				a.ContainersToStart = append(a.ContainersToStart, i)
			} else if k, failed := probeFailure(pod, c, cur, probes, false); failed {
				if restartsAfterProbeKill(pod, c) {
					k.Message += ", will be restarted"
					a.ContainersToStart = append(a.ContainersToStart, i)
				}
				a.ContainersToKill = append(a.ContainersToKill, k)
				probeKills = true
			} else if resizeActions(c, i, false, cur, rt, &a) {
				a.ContainersToStart = append(a.ContainersToStart, i)
			} else {
				kept++
			}
		case cur.State == runtimeapi.ContainerState_CONTAINER_EXITED:
			if !podspec.ShouldRestart(c, pod, cur.ExitCode) {
				continue
			}
			if period, remaining, ok := inBackoff(bo, pod, c.Name, cur); ok {
				a.Backoff[c.Name] = waitingReason{Reason: reasonCrashLoopBackOff, Message: crashLoopMessage(pod, c.Name, period)}
				a.NextSync = minPositive(a.NextSync, remaining)
				continue
			}
			a.ContainersToStart = append(a.ContainersToStart, i)
		default:
			// Created but never started, or unknown: that instance is unusable, start a fresh one.
			a.ContainersToKill = append(a.ContainersToKill, killTarget{ID: cur.ID, Name: c.Name, Reason: killNotStarted})
			a.ContainersToStart = append(a.ContainersToStart, i)
		}
	}
	if probeKills && kept == 0 && len(a.ContainersToStart) == 0 {
		// Nothing would run after these kills: like the kubelet, stop the whole pod instead, with
		// the pod's grace period and plain "Stopping container" events, sidecars included.
		a.KillPod, a.ContainersToKill, a.SidecarsToStart, a.EphemeralToStart = true, nil, nil, nil
	}
	return a
}

// regularContainersDone reports whether every regular container exited and will not run again.
func regularContainersDone(pod *v1.Pod, rt *podRuntime) bool {
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		cur := rt.latest(c.Name)
		if cur == nil || cur.State != runtimeapi.ContainerState_CONTAINER_EXITED || podspec.ShouldRestart(c, pod, cur.ExitCode) {
			return false
		}
	}
	return true
}

func sidecarRunning(pod *v1.Pod, rt *podRuntime) bool {
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if cur := rt.latest(c.Name); podspec.IsSidecar(c) && cur != nil && cur.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			return true
		}
	}
	return false
}

// sandboxActions handles a pod without a live sandbox: a first start, or a sandbox that died.
func sandboxActions(pod *v1.Pod, rt *podRuntime, sb *sandboxState, a podActions) podActions {
	if sb != nil {
		a.KillPod = true
		a.SandboxAttempt = sb.Attempt + 1
		// A pod that may not restart failed containers does not get a second sandbox.
		if pod.Spec.RestartPolicy == v1.RestartPolicyNever && len(rt.Containers) > 0 {
			return a
		}
	}
	var toStart []int
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		cur := rt.latest(c.Name)
		if cur != nil && cur.State == runtimeapi.ContainerState_CONTAINER_EXITED && !podspec.ShouldRestart(c, pod, cur.ExitCode) {
			continue
		}
		toStart = append(toStart, i)
	}
	if len(toStart) == 0 {
		// Every container is done for good: no sandbox for nothing to run.
		return a
	}
	a.CreateSandbox = true
	if len(pod.Spec.InitContainers) > 0 {
		// A new sandbox runs the init containers again, from the first.
		a.InitToStart = 0
		return a
	}
	a.ContainersToStart = toStart
	return a
}

// initDone reports whether the pod is initialised in sandbox sb: every regular init container
// succeeded and every sidecar runs there, or a main container was already created there (its
// init containers may have been garbage-collected since). Containers of older sandboxes don't
// count: a new sandbox runs the init containers again.
func initDone(pod *v1.Pod, rt *podRuntime, sb string, probes probeResults) bool {
	for i := range pod.Spec.Containers {
		if rt.latestIn(pod.Spec.Containers[i].Name, sb) != nil {
			return true
		}
	}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		cur := rt.latestIn(c.Name, sb)
		switch {
		case cur == nil:
			return false
		case podspec.IsSidecar(c):
			if cur.State != runtimeapi.ContainerState_CONTAINER_RUNNING || startupPending(c, cur, probes) {
				return false
			}
		case cur.State != runtimeapi.ContainerState_CONTAINER_EXITED || cur.ExitCode != 0:
			return false
		}
	}
	return true
}

// nextInit picks the init container to run next, one at a time and in order. A sidecar that
// runs lets the next init container start; a regular one must have succeeded.
func nextInit(pod *v1.Pod, rt *podRuntime, sb string, bo restartBackoff, probes probeResults, a *podActions) {
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		cur := rt.latestIn(c.Name, sb)
		switch {
		case cur == nil:
			a.InitToStart = i
			return
		case cur.State == runtimeapi.ContainerState_CONTAINER_RUNNING:
			if !podspec.IsSidecar(c) {
				// Resized in place while it runs (the API allows no restart policy for the
				// resize of an init container that is not a sidecar).
				if resizeActions(c, i, true, cur, rt, a) {
					a.InitToStart = i
				}
				return
			}
			if k, failed := probeFailure(pod, c, cur, probes, true); failed {
				a.ContainersToKill = append(a.ContainersToKill, k)
				a.InitToStart = i
				return
			}
			if resizeActions(c, i, true, cur, rt, a) {
				// Its resize policy restarts it.
				a.InitToStart = i
				return
			}
			if startupPending(c, cur, probes) {
				// The next init container waits until this sidecar has started.
				return
			}
			continue
		case cur.State == runtimeapi.ContainerState_CONTAINER_EXITED:
			if !podspec.IsSidecar(c) && cur.ExitCode == 0 {
				continue
			}
			if !podspec.IsSidecar(c) && !podspec.ShouldRestart(c, pod, cur.ExitCode) {
				// The pod has failed; its status says so and termination stops the sandbox.
				return
			}
			if period, remaining, ok := inBackoff(bo, pod, c.Name, cur); ok {
				a.Backoff[c.Name] = waitingReason{Reason: reasonCrashLoopBackOff, Message: crashLoopMessage(pod, c.Name, period)}
				a.NextSync = minPositive(a.NextSync, remaining)
				return
			}
			a.InitToStart = i
			return
		default:
			a.ContainersToKill = append(a.ContainersToKill, killTarget{ID: cur.ID, Name: c.Name, Reason: killNotStarted})
			a.InitToStart = i
			return
		}
	}
}

// sidecarActions restarts sidecars that stopped after the pod was initialised.
func sidecarActions(pod *v1.Pod, rt *podRuntime, sb string, bo restartBackoff, probes probeResults, a *podActions) {
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if !podspec.IsSidecar(c) {
			continue
		}
		cur := rt.latestIn(c.Name, sb)
		switch {
		case cur != nil && cur.State == runtimeapi.ContainerState_CONTAINER_RUNNING:
			if k, failed := probeFailure(pod, c, cur, probes, true); failed {
				a.ContainersToKill = append(a.ContainersToKill, k)
				a.SidecarsToStart = append(a.SidecarsToStart, i)
			} else if resizeActions(c, i, true, cur, rt, a) {
				a.SidecarsToStart = append(a.SidecarsToStart, i)
			}
		case cur != nil && cur.State == runtimeapi.ContainerState_CONTAINER_EXITED:
			if period, remaining, ok := inBackoff(bo, pod, c.Name, cur); ok {
				a.Backoff[c.Name] = waitingReason{Reason: reasonCrashLoopBackOff, Message: crashLoopMessage(pod, c.Name, period)}
				a.NextSync = minPositive(a.NextSync, remaining)
				continue
			}
			a.SidecarsToStart = append(a.SidecarsToStart, i)
		default:
			if cur != nil {
				a.ContainersToKill = append(a.ContainersToKill, killTarget{ID: cur.ID, Name: c.Name, Reason: killNotStarted})
			}
			a.SidecarsToStart = append(a.SidecarsToStart, i)
		}
	}
}

// resizeActions handles a running container whose allocated resources differ from those
// applied to it: resized in place, or, when its resize policy says so for a resource that
// changed, killed to be started again with them (it reports true then: the caller starts it).
func resizeActions(c *v1.Container, index int, isInit bool, cur *containerState, rt *podRuntime, a *podActions) (restart bool) {
	applied := rt.Actuated[c.Name]
	differs, restart := resizeChange(c, applied)
	switch {
	case !differs:
		return false
	case restart:
		a.ContainersToKill = append(a.ContainersToKill, killTarget{ID: cur.ID, Name: c.Name, Reason: "resize", Message: resizeKillMessage(c.Name)})
		return true
	}
	a.ContainersToResize = append(a.ContainersToResize, resizeTarget{
		ID: cur.ID, Name: c.Name, Init: isInit, Index: index,
		Desired: *c.Resources.DeepCopy(), Current: *applied.DeepCopy(),
	})
	return false
}

func inBackoff(bo restartBackoff, pod *v1.Pod, name string, cur *containerState) (period, remaining time.Duration, in bool) {
	if bo == nil {
		return 0, 0, false
	}
	return bo.InBackoff(backoffKey(pod, name), cur.FinishedAt)
}

func minPositive(a, b time.Duration) time.Duration {
	if a <= 0 || (b > 0 && b < a) {
		return b
	}
	return a
}
