// Package podtest holds the pod and container fixtures that the unit tests of several packages
// (provider, provider/translate, provider/status, provider/podspec) build their cases from, so
// that "the test pod" is one definition. Nothing outside tests imports it.
package podtest

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The test pod's identity.
const (
	PodName = "web"
	PodNS   = "default"
	PodUID  = "uid-1"
)

// T0 is the time every fixture's times derive from, so that no test depends on the wall clock.
var T0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// Option changes the test pod.
type Option func(*v1.Pod)

// Pod is web/default (uid-1, generation 3) with restartPolicy Always and one container "app",
// changed by opts.
func Pod(opts ...Option) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: PodName, Namespace: PodNS, UID: PodUID, Generation: 3},
		Spec: v1.PodSpec{
			RestartPolicy: v1.RestartPolicyAlways,
			Containers:    []v1.Container{Ctr("app")},
		},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

// WithContainers replaces the pod's containers.
func WithContainers(cs ...v1.Container) Option {
	return func(p *v1.Pod) { p.Spec.Containers = cs }
}

// WithInit sets the pod's init containers.
func WithInit(cs ...v1.Container) Option {
	return func(p *v1.Pod) { p.Spec.InitContainers = cs }
}

// WithRestart sets the pod's restart policy.
func WithRestart(rp v1.RestartPolicy) Option {
	return func(p *v1.Pod) { p.Spec.RestartPolicy = rp }
}

// WithHostNetwork puts the pod in the host's network namespace.
func WithHostNetwork() Option {
	return func(p *v1.Pod) { p.Spec.HostNetwork = true }
}

// Ctr is a container named name running image "<name>:1.0".
func Ctr(name string) v1.Container {
	return v1.Container{Name: name, Image: name + ":1.0"}
}

// Sidecar is a restartable init container.
func Sidecar(name string) v1.Container {
	return WithPolicy(Ctr(name), v1.ContainerRestartPolicyAlways)
}

// WithPolicy sets the container-level restart policy.
func WithPolicy(c v1.Container, p v1.ContainerRestartPolicy) v1.Container {
	c.RestartPolicy = &p
	return c
}

// WithRules sets container-level restart rules (and a container restart policy, which the API
// requires alongside them).
func WithRules(c v1.Container, p v1.ContainerRestartPolicy, rules ...v1.ContainerRestartRule) v1.Container {
	c.RestartPolicy = &p
	c.RestartPolicyRules = rules
	return c
}

// RestartRule is a container restart rule on exit codes.
func RestartRule(action v1.ContainerRestartRuleAction, op v1.ContainerRestartRuleOnExitCodesOperator, codes ...int32) v1.ContainerRestartRule {
	return v1.ContainerRestartRule{
		Action:    action,
		ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: op, Values: codes},
	}
}

// KnownBug checks a table row that once reproduced a difference from the kubelet (bug says
// which); the difference is fixed, so any diff now is a regression.
func KnownBug(t testing.TB, bug, diff string) {
	t.Helper()
	if diff != "" {
		t.Errorf("regression of a fixed difference from the kubelet: %s\n(-kubelet +vk-cri):\n%s", bug, diff)
	}
}
