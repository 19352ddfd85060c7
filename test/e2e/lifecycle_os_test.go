//go:build e2e

package e2e

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// A pod meant for another operating system is rejected by the node's admission as the kubelet
// rejects it: Failed with the kubelet's reason and message and a warning event, and nothing of it
// reaches the runtime. Like the NodeConformance spec "PodOSRejection", the pod is bound to the
// node directly (the scheduler does not look at spec.os).
func TestLifecyclePodOSRejection(t *testing.T) {
	for _, tc := range []struct {
		name, reason, message string
		mod                   func(*v1.Pod)
	}{
		{"spec-os", "PodOSNotSupported", "Failed to admit pod as the OS field doesn't match node OS",
			func(p *v1.Pod) { p.Spec.OS = &v1.PodOS{Name: v1.Windows} }},
		{"os-label", "PodOSSelectorNodeLabelDoesNotMatch", "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label",
			func(p *v1.Pod) { p.Labels = map[string]string{v1.LabelOSStable: "windows"} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ns := newNamespace(t)
			pod := basePod("wrong-os", v1.Container{Name: "c", Image: image("pause:3.10")})
			pod.Spec.NodeSelector = nil
			pod.Spec.NodeName = nodeName
			tc.mod(pod)
			created := createPod(t, ns, pod)
			p := waitPod(t, ns, "wrong-os", 30*time.Second, "rejected", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodFailed })
			if p.Status.Reason != tc.reason || p.Status.Message != "Pod was rejected: "+tc.message {
				t.Errorf("reason %q message %q, want %q %q", p.Status.Reason, p.Status.Message, tc.reason, "Pod was rejected: "+tc.message)
			}
			if len(p.Status.ContainerStatuses) != 0 {
				t.Errorf("container statuses of a rejected pod: %s", describeStatus(p))
			}
			if msg := eventWithReason(t, ns, "wrong-os", tc.reason); msg != tc.message {
				t.Errorf("%s event message %q, want %q", tc.reason, msg, tc.message)
			}
			if sbs, cs := runtimeObjects(t, string(created.UID)); len(sbs)+len(cs) != 0 {
				t.Errorf("the rejected pod reached the runtime: %d sandboxes, %d containers", len(sbs), len(cs))
			}
		})
	}
}
