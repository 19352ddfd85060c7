package translate

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Shared fixtures of the translation's unit tests.

const (
	testPodName = "web"
	testPodNS   = "default"
	testPodUID  = "uid-1"
)

// idsPerPod is the size of a pod's user namespace range: the kubelet's default, which the
// provider's allocator hands out (provider/userns_allocator.go).
const idsPerPod = 65536

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

// ctr is a container named name running image "<name>:1.0".
func ctr(name string) v1.Container {
	return v1.Container{Name: name, Image: name + ":1.0"}
}

func ptrTo[T any](v T) *T { return &v }

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// knownBug checks a table row that once reproduced a difference from the kubelet (bug says
// which); the difference is fixed, so any diff now is a regression.
func knownBug(t *testing.T, bug, diff string) {
	t.Helper()
	if diff != "" {
		t.Errorf("regression of a fixed difference from the kubelet: %s\n(-kubelet +vk-cri):\n%s", bug, diff)
	}
}
