package provider

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/vk-cri/vk-cri/streaming"
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

// A request that names pod web by namespace and name and another pod by UID reaches no
// runtime: the provider here has none, so any lookup would panic.
func TestStreamsRefuseAnotherPodsUID(t *testing.T) {
	p := &Provider{}
	pod := testPod()
	other := types.UID("uid-of-another-pod")
	ctx := context.Background()
	calls := map[string]func() error{
		"exec": func() error {
			_, err := p.ExecURL(ctx, pod, other, "app", []string{"true"}, streaming.Streams{Stdout: true})
			return err
		},
		"attach": func() error {
			_, err := p.AttachURL(ctx, pod, other, "app", streaming.Streams{Stdout: true})
			return err
		},
		"port-forward": func() error {
			_, err := p.PortForwardURL(ctx, pod, other, []int32{80})
			return err
		},
	}
	for name, call := range calls {
		if err := call(); err == nil || !strings.Contains(err.Error(), "pod not found") {
			t.Errorf("%s with another pod's UID: %v, want pod not found", name, err)
		}
	}
}
