//go:build e2e

package e2e

import (
	"fmt"
	"regexp"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// boundPod is a pod bound to the node directly, as pods that bypass the scheduler (or race it)
// reach a kubelet: only the node's own admission stands between them and the runtime.
func boundPod(name string, containers ...v1.Container) *v1.Pod {
	p := basePod(name, containers...)
	p.Spec.NodeSelector = nil
	p.Spec.NodeName = nodeName
	return p
}

// expectRejected waits for the pod to be refused with the kubelet's reason and a status message
// matching messageRE ("Pod was rejected: " and the event's message), and checks
// that nothing of it reached the runtime.
func expectRejected(t *testing.T, ns string, created *v1.Pod, reason, messageRE string) {
	t.Helper()
	p := waitPod(t, ns, created.Name, 30*time.Second, "rejected", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodFailed })
	re := regexp.MustCompile("^" + messageRE + "$")
	if p.Status.Reason != reason || !re.MatchString(p.Status.Message) {
		t.Errorf("reason %q message %q, want %s and %s", p.Status.Reason, p.Status.Message, reason, messageRE)
	}
	msg := eventWithReason(t, ns, created.Name, reason)
	if want := p.Status.Message[min(len(p.Status.Message), len("Pod was rejected: ")):]; msg != want {
		t.Errorf("%s event message %q, want %q", reason, msg, want)
	}
	if len(p.Status.ContainerStatuses) != 0 {
		t.Errorf("container statuses of a rejected pod: %s", describeStatus(p))
	}
	if sbs, cs := runtimeObjects(t, string(created.UID)); len(sbs)+len(cs) != 0 {
		t.Errorf("the rejected pod reached the runtime: %d sandboxes, %d containers", len(sbs), len(cs))
	}
}

func nodeAllocatable(t *testing.T) v1.ResourceList {
	t.Helper()
	n, err := s.kube.CoreV1().Nodes().Get(ctxFor(t, 10*time.Second), nodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading node %s: %v", nodeName, err)
	}
	return n.Status.Allocatable
}

// Pods bound to the node that ask for more than it can give are refused as the kubelet refuses
// them: OutOfcpu / OutOfmemory, with requested and capacity in the kubelet's units (millicores,
// bytes) against the node's allocatable.
func TestAdmissionResourceFit(t *testing.T) {
	alloc := nodeAllocatable(t)
	for _, tc := range []struct {
		name, reason string
		request      v1.ResourceList
		requested    int64
		capacity     int64
	}{
		{"cpu", "OutOfcpu", v1.ResourceList{v1.ResourceCPU: resource.MustParse("10k")}, 10000000, alloc.Cpu().MilliValue()},
		{"memory", "OutOfmemory", v1.ResourceList{v1.ResourceMemory: resource.MustParse("1000Gi")}, 1000 << 30, alloc.Memory().Value()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ns := newNamespace(t)
			c := v1.Container{Name: "c", Image: image("pause:3.10"), Resources: v1.ResourceRequirements{Requests: tc.request}}
			created := createPod(t, ns, boundPod("too-big", c))
			expectRejected(t, ns, created, tc.reason, fmt.Sprintf(
				"Pod was rejected: Node didn't have enough resource: %s, requested: %d, used: [0-9]+, capacity: %d", tc.name, tc.requested, tc.capacity))
		})
	}
}

// A pod whose required node affinity (or node selector) the node does not match is refused with
// NodeAffinity; one that matches the node's labels runs.
func TestAdmissionNodeAffinity(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*v1.Pod)
	}{
		{"affinity", func(p *v1.Pod) {
			p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
				NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{
					{Key: "example.com/no-such-label", Operator: v1.NodeSelectorOpExists}}}}}}}
		}},
		{"selector", func(p *v1.Pod) { p.Spec.NodeSelector = map[string]string{v1.LabelHostname: "another-node"} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ns := newNamespace(t)
			pod := boundPod("elsewhere", v1.Container{Name: "c", Image: image("pause:3.10")})
			tc.mod(pod)
			created := createPod(t, ns, pod)
			expectRejected(t, ns, created, "NodeAffinity",
				"Pod was rejected: Predicate NodeAffinity failed: node\\(s\\) didn't match Pod's node affinity/selector")
		})
	}
	t.Run("matching", func(t *testing.T) {
		t.Parallel()
		ns := newNamespace(t)
		pod := boundPod("here", v1.Container{Name: "c", Image: image("pause:3.10")})
		pod.Spec.NodeSelector = map[string]string{v1.LabelHostname: nodeName}
		createPod(t, ns, pod)
		waitPod(t, ns, "here", 60*time.Second, "running", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodRunning })
	})
}

// Of two pods bound to the node with the same host port, the first runs and the second is
// refused with NodePorts; the first keeps running.
func TestAdmissionHostPortConflict(t *testing.T) {
	ns := newNamespace(t)
	port := func(name string) *v1.Pod {
		return boundPod(name, v1.Container{Name: "c", Image: image("pause:3.10"),
			Ports: []v1.ContainerPort{{ContainerPort: 8080, HostPort: 18391, Protocol: v1.ProtocolTCP}}})
	}
	createPod(t, ns, port("first"))
	waitPod(t, ns, "first", 60*time.Second, "running and ready", isRunningReady)
	second := createPod(t, ns, port("second"))
	expectRejected(t, ns, second, "NodePorts",
		"Pod was rejected: Predicate NodePorts failed: node\\(s\\) didn't have free ports for the requested pod ports")
	first, err := s.kube.CoreV1().Pods(ns).Get(ctxFor(t, 10*time.Second), "first", metav1.GetOptions{})
	if err != nil || !isRunningReady(first) || first.Status.ContainerStatuses[0].RestartCount != 0 {
		t.Errorf("first pod after the conflict: %v %s", err, describeStatus(first))
	}
	// A pod on the same port with another protocol does not conflict.
	udp := port("udp")
	udp.Spec.Containers[0].Ports[0].Protocol = v1.ProtocolUDP
	createPod(t, ns, udp)
	waitPod(t, ns, "udp", 60*time.Second, "running", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodRunning })
}
