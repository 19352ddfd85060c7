package provider

import (
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-cri/vk-cri/internal/podtest"
	"github.com/vk-cri/vk-cri/provider/translate"
)

// The shared pod fixtures (internal/podtest).
type podOpt = podtest.Option

const (
	testPodName = podtest.PodName
	testPodNS   = podtest.PodNS
	testPodUID  = podtest.PodUID
)

var (
	testT0          = podtest.T0
	testPod         = podtest.Pod
	withContainers  = podtest.WithContainers
	withInit        = podtest.WithInit
	withRestart     = podtest.WithRestart
	withHostNetwork = podtest.WithHostNetwork
	ctr             = podtest.Ctr
	sidecarCtr      = podtest.Sidecar
	withPolicy      = podtest.WithPolicy
	withRules       = podtest.WithRules
	restartRule     = podtest.RestartRule
	knownBug        = podtest.KnownBug
)

// Shared fixtures of the provider's unit tests. Every time is derived from testT0 so that the
// tests never depend on the wall clock.

// ctrImage is ctr with another image.
func ctrImage(name, image string) v1.Container {
	return v1.Container{Name: name, Image: image}
}

// --- runtime state ---

// sandbox is a sandbox created attempt minutes after testT0; a ready one has IP 10.0.0.5.
func sandbox(id string, attempt uint32, ready bool) *sandboxState {
	sb := &sandboxState{ID: id, Attempt: attempt, Ready: ready, CreatedAt: testT0.Add(time.Duration(attempt) * time.Minute)}
	if ready {
		sb.IPs = []string{"10.0.0.5"}
	}
	return sb
}

type instOpt func(*containerState)

// restarts sets the instance's restart count; its creation time follows it.
func restarts(n int) instOpt {
	return func(cs *containerState) {
		cs.RestartCount = n
		cs.Attempt = uint32(n)
		cs.CreatedAt = testT0.Add(time.Duration(n)*time.Minute + time.Second)
		if !cs.StartedAt.IsZero() {
			cs.StartedAt = cs.CreatedAt.Add(time.Second)
		}
		if !cs.FinishedAt.IsZero() {
			cs.FinishedAt = cs.CreatedAt.Add(30 * time.Second)
		}
	}
}

// hashOf makes the instance look created from another spec of the container.
func hashOf(c v1.Container) instOpt {
	return func(cs *containerState) { cs.Hash = translate.ContainerHash(&c) }
}

func reason(r, msg string) instOpt {
	return func(cs *containerState) { cs.Reason, cs.Message = r, msg }
}

// inst is one runtime instance of container c in sandbox sb, created from c's current spec.
func inst(c v1.Container, id, sb string, state runtimeapi.ContainerState, opts ...instOpt) *containerState {
	cs := &containerState{
		ID:        id,
		Name:      c.Name,
		SandboxID: sb,
		State:     state,
		CreatedAt: testT0.Add(time.Second),
		Image:     c.Image,
		ImageRef:  "sha256:" + c.Name,
		Hash:      translate.ContainerHash(&c),
	}
	switch state {
	case runtimeapi.ContainerState_CONTAINER_RUNNING:
		cs.StartedAt = cs.CreatedAt.Add(time.Second)
	case runtimeapi.ContainerState_CONTAINER_EXITED:
		cs.StartedAt = cs.CreatedAt.Add(time.Second)
		cs.FinishedAt = cs.CreatedAt.Add(30 * time.Second)
	}
	for _, o := range opts {
		o(cs)
	}
	return cs
}

func running(c v1.Container, id, sb string, opts ...instOpt) *containerState {
	return inst(c, id, sb, runtimeapi.ContainerState_CONTAINER_RUNNING, opts...)
}

func exited(c v1.Container, id, sb string, code int32, opts ...instOpt) *containerState {
	r := "Completed"
	if code != 0 {
		r = "Error"
	}
	opts = append([]instOpt{func(cs *containerState) { cs.ExitCode = code; cs.Reason = r }}, opts...)
	return inst(c, id, sb, runtimeapi.ContainerState_CONTAINER_EXITED, opts...)
}

func created(c v1.Container, id, sb string, opts ...instOpt) *containerState {
	return inst(c, id, sb, runtimeapi.ContainerState_CONTAINER_CREATED, opts...)
}

func unknownState(c v1.Container, id, sb string, opts ...instOpt) *containerState {
	return inst(c, id, sb, runtimeapi.ContainerState_CONTAINER_UNKNOWN, opts...)
}

// rtOf builds a podRuntime and sorts it newest first, as the inspector does.
func rtOf(sandboxes []*sandboxState, containers ...*containerState) *podRuntime {
	r := &podRuntime{Sandboxes: sandboxes, Containers: containers}
	r.sort()
	return r
}

func sbs(s ...*sandboxState) []*sandboxState { return s }

// --- small helpers ---

func ptrTo[T any](v T) *T { return &v }

// statuses is a list of container statuses.
func statuses(s ...v1.ContainerStatus) []v1.ContainerStatus { return s }
