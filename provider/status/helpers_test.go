package status

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Fixtures of the status unit tests. Every time is derived from testT0 so that the tests never
// depend on the wall clock.

var testT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

type podOpt func(*v1.Pod)

// testPod is web/default (uid-1) with restartPolicy Always and the given containers (one
// container "app" when none are given).
func testPod(opts ...podOpt) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1", Generation: 3},
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

// ctr is a container named name running image "<name>:1.0".
func ctr(name string) v1.Container {
	return v1.Container{Name: name, Image: name + ":1.0"}
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
func ptrTo[T any](v T) *T { return &v }

// knownBug checks a table row that once reproduced a difference from the kubelet (bug says
// which); the difference is fixed, so any diff now is a regression.
func knownBug(t *testing.T, bug, diff string) {
	t.Helper()
	if diff != "" {
		t.Errorf("regression of a fixed difference from the kubelet: %s\n(-kubelet +vk-cri):\n%s", bug, diff)
	}
}

type condSummary struct {
	Type    v1.PodConditionType
	Status  v1.ConditionStatus
	Reason  string
	Message string
}

func summarize(conds []v1.PodCondition) []condSummary {
	out := make([]condSummary, 0, len(conds))
	for _, c := range conds {
		out = append(out, condSummary{c.Type, c.Status, c.Reason, c.Message})
	}
	return out
}
