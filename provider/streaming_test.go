package provider

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func TestStreamPodUID(t *testing.T) {
	pod := testPod()
	for _, tc := range []struct {
		requested types.UID
		ok        bool
	}{
		{"", true},
		{testPodUID, true},
		{"uid-of-another-pod", false},
	} {
		got, err := streamPodUID(pod, tc.requested)
		if (err == nil) != tc.ok {
			t.Errorf("streamPodUID(%q) error %v, want ok=%v", tc.requested, err, tc.ok)
		}
		if tc.ok && got != pod.UID {
			t.Errorf("streamPodUID(%q) = %q, want the pod's own %q", tc.requested, got, pod.UID)
		}
	}
}

// A port-forward that names pod web by namespace and name and another pod by UID reaches no
// runtime: the provider here has none, so any lookup would panic.
func TestPortForwardRefusesAnotherPodsUID(t *testing.T) {
	p := &Provider{}
	_, err := p.PortForwardURL(context.Background(), testPod(), "uid-of-another-pod", []int32{80})
	if err == nil || !strings.Contains(err.Error(), "pod not found") {
		t.Errorf("port-forward with another pod's UID: %v, want pod not found", err)
	}
}

// An attach is checked in the kubelet's order (GetAttach): the running container first, then
// the UID, then the spec; the messages are the kubelet's, with the pod's full name.
func TestAttachTarget(t *testing.T) {
	pod := testPod()
	full := pod.Name + "_" + pod.Namespace
	for _, tc := range []struct {
		name, container, running string
		uid                      types.UID
		want                     string
	}{
		{"running, no UID", "app", "c1", "", ""},
		{"running, its UID", "app", "c1", testPodUID, ""},
		{"running, another pod's UID", "app", "c1", "uid-of-another-pod", "pod " + full + " not found"},
		{"not running, another pod's UID", "app", "", "uid-of-another-pod", "container app not found in pod " + full},
		{"not in the spec", "ghost", "c1", "", "container ghost not found in pod " + full},
	} {
		spec, err := attachTarget(pod, tc.uid, tc.container, tc.running)
		switch {
		case tc.want == "" && (err != nil || spec == nil || spec.Name != tc.container):
			t.Errorf("%s: %v %v, want the spec of %s", tc.name, spec, err, tc.container)
		case tc.want != "" && (err == nil || err.Error() != tc.want):
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}
