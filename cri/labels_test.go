package cri

import (
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func labelsPod() *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-0", Namespace: "shop", UID: "uid-1",
			Labels: map[string]string{"app": "web", "tier": "frontend"},
		},
	}
}

func TestLabelKeys(t *testing.T) {
	// The keys the kubelet writes, which crictl and log shippers read.
	want := map[string]string{
		PodNameLabel:                                "io.kubernetes.pod.name",
		PodNamespaceLabel:                           "io.kubernetes.pod.namespace",
		PodUIDLabel:                                 "io.kubernetes.pod.uid",
		ContainerNameLabel:                          "io.kubernetes.container.name",
		ContainerHashAnnotation:                     "io.kubernetes.container.hash",
		ContainerRestartCountAnnotation:             "io.kubernetes.container.restartCount",
		PodTerminationGracePeriodAnnotation:         "io.kubernetes.pod.terminationGracePeriod",
		ContainerTerminationMessagePathAnnotation:   "io.kubernetes.container.terminationMessagePath",
		ContainerTerminationMessagePolicyAnnotation: "io.kubernetes.container.terminationMessagePolicy",
	}
	for got, w := range want {
		if got != w {
			t.Errorf("key %q, want %q", got, w)
		}
	}
}

func TestSandboxLabels(t *testing.T) {
	pod := labelsPod()
	got := SandboxLabels(pod, "node-1")
	want := map[string]string{
		"app":                         "web",
		"tier":                        "frontend",
		"io.kubernetes.pod.name":      "web-0",
		"io.kubernetes.pod.namespace": "shop",
		"io.kubernetes.pod.uid":       "uid-1",
		"io.vk-cri.node":              "node-1",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SandboxLabels = %v, want %v", got, want)
	}
	// The pod's labels are copied, not shared.
	got["app"] = "changed"
	if pod.Labels["app"] != "web" {
		t.Errorf("SandboxLabels aliases the pod's labels")
	}
}

func TestSandboxLabelsIdentityWins(t *testing.T) {
	// A pod label cannot forge the identity or owner labels vk-cri filters on.
	pod := labelsPod()
	pod.Labels = map[string]string{
		"io.kubernetes.pod.uid":  "forged",
		"io.kubernetes.pod.name": "forged",
		"io.vk-cri.node":         "other-node",
	}
	got := SandboxLabels(pod, "node-1")
	if got[PodUIDLabel] != "uid-1" || got[PodNameLabel] != "web-0" || got[OwnerLabel] != "node-1" {
		t.Errorf("SandboxLabels = %v: pod labels override identity/owner", got)
	}
}

func TestSandboxLabelsNoPodLabels(t *testing.T) {
	pod := labelsPod()
	pod.Labels = nil
	if got := SandboxLabels(pod, "n"); len(got) != 4 {
		t.Errorf("SandboxLabels = %v, want the 4 identity labels", got)
	}
}

func TestContainerLabels(t *testing.T) {
	got := ContainerLabels(labelsPod(), "app", "node-1")
	want := map[string]string{
		"io.kubernetes.pod.name":       "web-0",
		"io.kubernetes.pod.namespace":  "shop",
		"io.kubernetes.pod.uid":        "uid-1",
		"io.kubernetes.container.name": "app",
		"io.vk-cri.node":               "node-1",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ContainerLabels = %v, want %v", got, want)
	}
}

func TestContainerAnnotations(t *testing.T) {
	grace := int64(45)
	zero := int64(0)
	c := &v1.Container{Name: "app", TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: v1.TerminationMessageFallbackToLogsOnError}
	cases := []struct {
		name    string
		grace   *int64
		restart int
		want    map[string]string
	}{
		{"no grace period", nil, 0, map[string]string{
			"io.kubernetes.container.hash":                     "abc",
			"io.kubernetes.container.restartCount":             "0",
			"io.kubernetes.container.terminationMessagePath":   "/dev/termination-log",
			"io.kubernetes.container.terminationMessagePolicy": "FallbackToLogsOnError",
		}},
		{"grace period and restarts", &grace, 12, map[string]string{
			"io.kubernetes.container.hash":                     "abc",
			"io.kubernetes.container.restartCount":             "12",
			"io.kubernetes.container.terminationMessagePath":   "/dev/termination-log",
			"io.kubernetes.container.terminationMessagePolicy": "FallbackToLogsOnError",
			"io.kubernetes.pod.terminationGracePeriod":         "45",
		}},
		{"zero grace period is written", &zero, 1, map[string]string{
			"io.kubernetes.container.hash":                     "abc",
			"io.kubernetes.container.restartCount":             "1",
			"io.kubernetes.container.terminationMessagePath":   "/dev/termination-log",
			"io.kubernetes.container.terminationMessagePolicy": "FallbackToLogsOnError",
			"io.kubernetes.pod.terminationGracePeriod":         "0",
		}},
	}
	for _, tc := range cases {
		pod := labelsPod()
		pod.Spec.TerminationGracePeriodSeconds = tc.grace
		got := ContainerAnnotations(pod, c, "abc", tc.restart)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: ContainerAnnotations = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestRestartCount(t *testing.T) {
	cases := []struct {
		ann  map[string]string
		want int
	}{
		{nil, 0},
		{map[string]string{}, 0},
		{map[string]string{ContainerRestartCountAnnotation: "0"}, 0},
		{map[string]string{ContainerRestartCountAnnotation: "7"}, 7},
		{map[string]string{ContainerRestartCountAnnotation: "x"}, 0},
		{map[string]string{ContainerRestartCountAnnotation: ""}, 0},
		{map[string]string{ContainerRestartCountAnnotation: " 3"}, 0},
		{map[string]string{"other": "5"}, 0},
	}
	for _, tc := range cases {
		if got := RestartCount(tc.ann); got != tc.want {
			t.Errorf("RestartCount(%v) = %d, want %d", tc.ann, got, tc.want)
		}
	}
	// Round trip through the annotations written at creation.
	for _, n := range []int{0, 1, 42} {
		a := ContainerAnnotations(labelsPod(), &v1.Container{Name: "a"}, "h", n)
		if got := RestartCount(a); got != n {
			t.Errorf("round trip of %d: %d", n, got)
		}
	}
}
