package provider

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-cri/vk-cri/provider/translate"
)

// Shared fixtures of the provider's unit tests. Every time is derived from testT0 so that the
// tests never depend on the wall clock.

var testT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

const (
	testPodName = "web"
	testPodNS   = "default"
	testPodUID  = "uid-1"
)

type podOpt func(*v1.Pod)

// testPod is web/default (uid-1) with restartPolicy Always and the given containers (one
// container "app" when none are given).
func testPod(opts ...podOpt) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: testPodName, Namespace: testPodNS, UID: testPodUID, Generation: 3},
		Spec: v1.PodSpec{
			RestartPolicy: v1.RestartPolicyAlways,
			Containers:    []v1.Container{ctr("app")},
		},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func withContainers(cs ...v1.Container) podOpt {
	return func(p *v1.Pod) { p.Spec.Containers = cs }
}

func withInit(cs ...v1.Container) podOpt {
	return func(p *v1.Pod) { p.Spec.InitContainers = cs }
}

func withRestart(rp v1.RestartPolicy) podOpt {
	return func(p *v1.Pod) { p.Spec.RestartPolicy = rp }
}

func withHostNetwork() podOpt {
	return func(p *v1.Pod) { p.Spec.HostNetwork = true }
}

// ctr is a container named name running image "<name>:1.0".
func ctr(name string) v1.Container {
	return v1.Container{Name: name, Image: name + ":1.0"}
}

// ctrImage is ctr with another image.
func ctrImage(name, image string) v1.Container {
	return v1.Container{Name: name, Image: image}
}

// sidecarCtr is a restartable init container.
func sidecarCtr(name string) v1.Container {
	c := ctr(name)
	always := v1.ContainerRestartPolicyAlways
	c.RestartPolicy = &always
	return c
}

// withPolicy sets the container-level restart policy.
func withPolicy(c v1.Container, p v1.ContainerRestartPolicy) v1.Container {
	c.RestartPolicy = &p
	return c
}

// withRules sets container-level restart rules (and a container restart policy, which the API
// requires alongside them).
func withRules(c v1.Container, p v1.ContainerRestartPolicy, rules ...v1.ContainerRestartRule) v1.Container {
	c.RestartPolicy = &p
	c.RestartPolicyRules = rules
	return c
}

func restartRule(action v1.ContainerRestartRuleAction, op v1.ContainerRestartRuleOnExitCodesOperator, codes ...int32) v1.ContainerRestartRule {
	return v1.ContainerRestartRule{
		Action:    action,
		ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: op, Values: codes},
	}
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

// knownBug checks a table row that once reproduced a difference from the kubelet (bug says
// which); the difference is fixed, so any diff now is a regression.
func knownBug(t *testing.T, bug, diff string) {
	t.Helper()
	if diff != "" {
		t.Errorf("regression of a fixed difference from the kubelet: %s\n(-kubelet +vk-cri):\n%s", bug, diff)
	}
}

// statuses is a list of container statuses.
func statuses(s ...v1.ContainerStatus) []v1.ContainerStatus { return s }
