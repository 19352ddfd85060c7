package podspec

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Fixtures of the spec rules' unit tests.

type podOpt func(*v1.Pod)

// testPod is web/default with restartPolicy Always and the given containers (one container
// "app" when none are given).
func testPod(opts ...podOpt) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1"},
		Spec:       v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways, Containers: []v1.Container{ctr("app")}},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func withContainers(cs ...v1.Container) podOpt {
	return func(p *v1.Pod) { p.Spec.Containers = cs }
}

func withRestart(rp v1.RestartPolicy) podOpt {
	return func(p *v1.Pod) { p.Spec.RestartPolicy = rp }
}

// ctr is a container named name running image "<name>:1.0".
func ctr(name string) v1.Container {
	return v1.Container{Name: name, Image: name + ":1.0"}
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

// knownBug checks a table row that once reproduced a difference from the kubelet (bug says
// which); the difference is fixed, so any diff now is a regression.
func knownBug(t *testing.T, bug, diff string) {
	t.Helper()
	if diff != "" {
		t.Errorf("regression of a fixed difference from the kubelet: %s\n(-kubelet +vk-cri):\n%s", bug, diff)
	}
}
