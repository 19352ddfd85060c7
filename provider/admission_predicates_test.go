package provider

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// admissionTestNode is node vk-adm with 2 cpus, 4Gi of memory, 10Gi of ephemeral-storage, room
// for 110 pods, no hugepages, 2 example.com/gpu, the well-known labels and a "zone=a" label.
func admissionTestNode() *v1.Node {
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "vk-adm", Labels: map[string]string{
			v1.LabelHostname: "vk-adm", v1.LabelOSStable: "linux", "zone": "a"}},
		Status: v1.NodeStatus{Allocatable: rl("cpu", "2", "memory", "4Gi", "ephemeral-storage", "10Gi", "pods", "110",
			"hugepages-2Mi", "0", "example.com/gpu", "2")},
	}
}

// otherPod is an admitted pod of the node named name with one container requesting requests.
func otherPod(name string, requests v1.ResourceList) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testPodNS, UID: types.UID("uid-" + name)},
		Spec:       v1.PodSpec{NodeName: "vk-adm", Containers: []v1.Container{withResources(ctr("c"), requests, nil)}},
	}
}

func podRequesting(requests v1.ResourceList) *v1.Pod {
	p := testPod(withContainers(withResources(ctr("app"), requests, nil)))
	p.Spec.NodeName = "vk-adm"
	return p
}

func withHostPort(c v1.Container, ip string, protocol v1.Protocol, port int32) v1.Container {
	c.Ports = append(c.Ports, v1.ContainerPort{ContainerPort: 80, HostPort: port, HostIP: ip, Protocol: protocol})
	return c
}

func requiredAffinity(key string, op v1.NodeSelectorOperator, values ...string) *v1.Affinity {
	return &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
		NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{Key: key, Operator: op, Values: values}}}}}}}
}

func outOf(name string, requested, used, capacity int64) string {
	return fmt.Sprintf("OutOf%s: Node didn't have enough resource: %s, requested: %d, used: %d, capacity: %d", name, name, requested, used, capacity)
}

const (
	wantAffinity = "NodeAffinity: Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"
	wantPorts    = "NodePorts: Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports"
	wantTaint    = "TaintToleration: Predicate TaintToleration failed: node(s) had taints that the pod didn't tolerate"
	wantNodeName = "NodeName: Predicate NodeName failed: node(s) didn't match the requested node name"
)

// The kubelet's predicate admission: reasons, messages and units as the kubelet v1.37 gives them
// (InsufficientResourceError, PredicateFailureError), the first failure in its order.
func TestAdmitPredicates(t *testing.T) {
	sidecar := func(c v1.Container) v1.Container { c.RestartPolicy = ptr.To(v1.ContainerRestartPolicyAlways); return c }
	cases := []struct {
		name   string
		pod    *v1.Pod
		node   func(*v1.Node)
		others []*v1.Pod
		want   string // "reason: message", "" admits
	}{
		{name: "fits", pod: podRequesting(rl("cpu", "1", "memory", "1Gi"))},
		{name: "no requests on a full cpu", pod: podRequesting(nil), others: []*v1.Pod{otherPod("a", rl("cpu", "2"))}},
		// The example: 10000 cpus in millicores against 2 cpus.
		{name: "cpu", pod: podRequesting(rl("cpu", "10k")), want: outOf("cpu", 10000000, 0, 2000)},
		{name: "cpu used by others", pod: podRequesting(rl("cpu", "1500m")),
			others: []*v1.Pod{otherPod("a", rl("cpu", "500m")), otherPod("b", rl("cpu", "100m"))}, want: outOf("cpu", 1500, 600, 2000)},
		{name: "cpu exactly fits", pod: podRequesting(rl("cpu", "1500m")), others: []*v1.Pod{otherPod("a", rl("cpu", "500m"))}},
		{name: "memory in bytes", pod: podRequesting(rl("memory", "1000Gi")), want: outOf("memory", 1000<<30, 0, 4<<30)},
		{name: "cpu before memory", pod: podRequesting(rl("memory", "1000Gi", "cpu", "3")), want: outOf("cpu", 3000, 0, 2000)},
		{name: "ephemeral-storage", pod: podRequesting(rl("ephemeral-storage", "8Gi")), others: []*v1.Pod{otherPod("a", rl("ephemeral-storage", "3Gi"))},
			want: outOf("ephemeral-storage", 8<<30, 3<<30, 10<<30)},
		{name: "pods count first", pod: podRequesting(rl("cpu", "3")), node: func(n *v1.Node) { n.Status.Allocatable["pods"] = rl("p", "2")["p"] },
			others: []*v1.Pod{otherPod("a", nil), otherPod("b", nil)}, want: outOf("pods", 1, 2, 2)},
		{name: "pods count with room", pod: podRequesting(nil), node: func(n *v1.Node) { n.Status.Allocatable["pods"] = rl("p", "2")["p"] },
			others: []*v1.Pod{otherPod("a", nil)}},
		{name: "extended resource short", pod: podRequesting(rl("example.com/gpu", "2")), others: []*v1.Pod{otherPod("a", rl("example.com/gpu", "1"))},
			want: outOf("example.com/gpu", 2, 1, 2)},
		// Unknown to the node: a cluster-level resource, not refused (removeMissingExtendedResources).
		{name: "extended resource the node lacks", pod: podRequesting(rl("example.org/fpga", "4"))},
		// hugepages are native: the node's 0 counts.
		{name: "hugepages", pod: func() *v1.Pod {
			p := podRequesting(rl("hugepages-2Mi", "4Mi", "memory", "8Mi"))
			p.Spec.Containers[0].Resources.Limits = rl("hugepages-2Mi", "4Mi", "memory", "8Mi")
			return p
		}(), want: outOf("hugepages-2Mi", 4<<20, 0, 0)},
		// Init containers run before the others: the larger of the largest one and the sum.
		{name: "init container larger than the containers", pod: func() *v1.Pod {
			p := podRequesting(rl("cpu", "500m"))
			p.Spec.InitContainers = []v1.Container{withResources(ctr("init"), rl("cpu", "2500m"), nil)}
			return p
		}(), want: outOf("cpu", 2500, 0, 2000)},
		// A sidecar runs next to the containers: added to them.
		{name: "sidecar added", pod: func() *v1.Pod {
			p := podRequesting(rl("cpu", "1500m"))
			p.Spec.InitContainers = []v1.Container{sidecar(withResources(ctr("side"), rl("cpu", "600m"), nil))}
			return p
		}(), want: outOf("cpu", 2100, 0, 2000)},
		{name: "overhead counted", pod: func() *v1.Pod {
			p := podRequesting(rl("memory", "4Gi"))
			p.Spec.Overhead = rl("memory", "1Mi")
			return p
		}(), want: outOf("memory", 4<<30+1<<20, 0, 4<<30)},
		{name: "pod-level requests", pod: func() *v1.Pod {
			p := podRequesting(rl("cpu", "100m"))
			p.Spec.Resources = &v1.ResourceRequirements{Requests: rl("cpu", "3")}
			return p
		}(), want: outOf("cpu", 3000, 0, 2000)},
		// An admitted pod resized down in its spec still holds what its containers run with.
		{name: "others at the larger of spec and status", pod: podRequesting(rl("cpu", "1500m")), others: []*v1.Pod{func() *v1.Pod {
			o := otherPod("a", rl("cpu", "100m"))
			o.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "c", Resources: &v1.ResourceRequirements{Requests: rl("cpu", "1")}}}
			return o
		}()}, want: outOf("cpu", 1500, 1000, 2000)},

		{name: "node selector", pod: func() *v1.Pod {
			p := podRequesting(nil)
			p.Spec.NodeSelector = map[string]string{"zone": "b"}
			return p
		}(), want: wantAffinity},
		{name: "node selector matching", pod: func() *v1.Pod {
			p := podRequesting(nil)
			p.Spec.NodeSelector = map[string]string{"zone": "a"}
			return p
		}()},
		{name: "required affinity", pod: func() *v1.Pod {
			p := podRequesting(nil)
			p.Spec.Affinity = requiredAffinity("disktype", v1.NodeSelectorOpIn, "ssd")
			return p
		}(), want: wantAffinity},
		{name: "required affinity matching", pod: func() *v1.Pod {
			p := podRequesting(nil)
			p.Spec.Affinity = requiredAffinity("zone", v1.NodeSelectorOpIn, "a", "b")
			return p
		}()},
		{name: "preferred affinity does not refuse", pod: func() *v1.Pod {
			p := podRequesting(nil)
			p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{
				{Weight: 1, Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "zone", Operator: v1.NodeSelectorOpIn, Values: []string{"z"}}}}}}}}
			return p
		}()},
		{name: "resources before affinity", pod: func() *v1.Pod {
			p := podRequesting(rl("memory", "5Gi"))
			p.Spec.NodeSelector = map[string]string{"zone": "b"}
			return p
		}(), want: outOf("memory", 5<<30, 0, 4<<30)},
		{name: "node name", pod: func() *v1.Pod { p := podRequesting(nil); p.Spec.NodeName = "other"; return p }(), want: wantNodeName},

		{name: "host port taken", pod: testPod(withContainers(withHostPort(ctr("app"), "", "", 8080))),
			others: []*v1.Pod{{ObjectMeta: metav1.ObjectMeta{UID: "o"}, Spec: v1.PodSpec{Containers: []v1.Container{withHostPort(ctr("c"), "", v1.ProtocolTCP, 8080)}}}},
			want:   wantPorts},
		{name: "host port, other protocol", pod: testPod(withContainers(withHostPort(ctr("app"), "", v1.ProtocolUDP, 8080))),
			others: []*v1.Pod{{ObjectMeta: metav1.ObjectMeta{UID: "o"}, Spec: v1.PodSpec{Containers: []v1.Container{withHostPort(ctr("c"), "", "", 8080)}}}}},
		{name: "host port on an IP, taken on all", pod: testPod(withContainers(withHostPort(ctr("app"), "127.0.0.2", "", 8080))),
			others: []*v1.Pod{{ObjectMeta: metav1.ObjectMeta{UID: "o"}, Spec: v1.PodSpec{Containers: []v1.Container{withHostPort(ctr("c"), "", "", 8080)}}}},
			want:   wantPorts},
		{name: "host port on all, taken on an IP", pod: testPod(withContainers(withHostPort(ctr("app"), "0.0.0.0", "", 8080))),
			others: []*v1.Pod{{ObjectMeta: metav1.ObjectMeta{UID: "o"}, Spec: v1.PodSpec{Containers: []v1.Container{withHostPort(ctr("c"), "127.0.0.2", "", 8080)}}}},
			want:   wantPorts},
		{name: "host ports on two IPs", pod: testPod(withContainers(withHostPort(ctr("app"), "127.0.0.3", "", 8080))),
			others: []*v1.Pod{{ObjectMeta: metav1.ObjectMeta{UID: "o"}, Spec: v1.PodSpec{Containers: []v1.Container{withHostPort(ctr("c"), "127.0.0.2", "", 8080)}}}}},
		{name: "host port of a sidecar", pod: testPod(withContainers(withHostPort(ctr("app"), "", "", 8080))),
			others: []*v1.Pod{{ObjectMeta: metav1.ObjectMeta{UID: "o"}, Spec: v1.PodSpec{
				InitContainers: []v1.Container{sidecar(withHostPort(ctr("s"), "", "", 8080))}, Containers: []v1.Container{ctr("c")}}}},
			want: wantPorts},
		{name: "host port of a plain init container", pod: testPod(withContainers(withHostPort(ctr("app"), "", "", 8080))),
			others: []*v1.Pod{{ObjectMeta: metav1.ObjectMeta{UID: "o"}, Spec: v1.PodSpec{
				InitContainers: []v1.Container{withHostPort(ctr("i"), "", "", 8080)}, Containers: []v1.Container{ctr("c")}}}}},
		{name: "affinity before ports", pod: func() *v1.Pod {
			p := testPod(withContainers(withHostPort(ctr("app"), "", "", 8080)))
			p.Spec.NodeSelector = map[string]string{"zone": "b"}
			return p
		}(), others: []*v1.Pod{{ObjectMeta: metav1.ObjectMeta{UID: "o"}, Spec: v1.PodSpec{Containers: []v1.Container{withHostPort(ctr("c"), "", "", 8080)}}}},
			want: wantAffinity},

		{name: "NoExecute taint", pod: podRequesting(nil), node: func(n *v1.Node) {
			n.Spec.Taints = []v1.Taint{{Key: "maintenance", Value: "yes", Effect: v1.TaintEffectNoExecute}}
		}, want: wantTaint},
		{name: "NoSchedule taint ignored", pod: podRequesting(nil), node: func(n *v1.Node) {
			n.Spec.Taints = []v1.Taint{{Key: "maintenance", Effect: v1.TaintEffectNoSchedule}}
		}},
		{name: "NoExecute taint tolerated", pod: func() *v1.Pod {
			p := podRequesting(nil)
			p.Spec.Tolerations = []v1.Toleration{{Key: "maintenance", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute}}
			return p
		}(), node: func(n *v1.Node) {
			n.Spec.Taints = []v1.Taint{{Key: "maintenance", Value: "yes", Effect: v1.TaintEffectNoExecute}}
		}},
		{name: "ports before taints", pod: testPod(withContainers(withHostPort(ctr("app"), "", "", 8080))), node: func(n *v1.Node) {
			n.Spec.Taints = []v1.Taint{{Key: "maintenance", Effect: v1.TaintEffectNoExecute}}
		}, others: []*v1.Pod{{ObjectMeta: metav1.ObjectMeta{UID: "o"}, Spec: v1.PodSpec{Containers: []v1.Container{withHostPort(ctr("c"), "", "", 8080)}}}},
			want: wantPorts},
		{name: "OS label before resources", pod: func() *v1.Pod {
			p := podRequesting(rl("cpu", "10k"))
			p.Labels = map[string]string{v1.LabelOSStable: "windows"}
			return p
		}(), want: "PodOSSelectorNodeLabelDoesNotMatch: Failed to admit pod as the `kubernetes.io/os` label doesn't match node label"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			node := admissionTestNode()
			if tc.node != nil {
				tc.node(node)
			}
			r := admitPredicates(tc.pod, "linux", node, tc.others, nil)
			got := ""
			if r != nil {
				got = r.Reason + ": " + r.Message
			}
			if got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// Like the kubelet, a pod refused for the node affinity alone is checked again against the node
// read afresh (its labels may have just changed); a pod refused for more is not.
func TestAdmitPredicatesRereadsTheNodeForAffinity(t *testing.T) {
	pod := podRequesting(nil)
	pod.Spec.NodeSelector = map[string]string{"zone": "b"}
	relabelled := admissionTestNode()
	relabelled.Labels["zone"] = "b"
	reads := 0
	fresh := func() (*v1.Node, error) { reads++; return relabelled, nil }
	if r := admitPredicates(pod, "linux", admissionTestNode(), nil, fresh); r != nil || reads != 1 {
		t.Errorf("rejection %+v after %d reads, want admitted after 1", r, reads)
	}
	reads = 0
	big := podRequesting(rl("cpu", "3"))
	big.Spec.NodeSelector = map[string]string{"zone": "b"}
	if r := admitPredicates(big, "linux", admissionTestNode(), nil, fresh); r == nil || r.Reason != "OutOfcpu" || reads != 0 {
		t.Errorf("rejection %+v after %d reads, want OutOfcpu without reading the node", r, reads)
	}
	failing := func() (*v1.Node, error) { return nil, fmt.Errorf("apiserver down") }
	if r := admitPredicates(pod, "linux", admissionTestNode(), nil, failing); r == nil || r.Reason != "NodeAffinity" {
		t.Errorf("rejection %+v, want NodeAffinity from the cached node when the read fails", r)
	}
	if r := admitPredicates(pod, "linux", nil, nil, fresh); r == nil || r.Reason != "InvalidNodeInfo" || r.Message != "Kubelet cannot get node info." {
		t.Errorf("rejection %+v without a node, want InvalidNodeInfo", r)
	}
}

// Every failure is listed in the kubelet's order (it reports the first).
func TestGeneralPredicatesOrder(t *testing.T) {
	pod := testPod(withContainers(withHostPort(withResources(ctr("app"), rl("cpu", "3", "memory", "5Gi", "example.com/gpu", "3", "example.com/a", "1"), nil), "", "", 8080)))
	pod.Spec.NodeName = "elsewhere"
	pod.Spec.NodeSelector = map[string]string{"zone": "b"}
	node := admissionTestNode()
	node.Status.Allocatable["example.com/a"] = rl("x", "0")["x"]
	node.Spec.Taints = []v1.Taint{{Key: "k", Effect: v1.TaintEffectNoExecute}}
	others := []*v1.Pod{{ObjectMeta: metav1.ObjectMeta{UID: "o"}, Spec: v1.PodSpec{Containers: []v1.Container{withHostPort(ctr("c"), "", "", 8080)}}}}
	var got []string
	for _, f := range generalPredicates(pod, node, others) {
		got = append(got, f.Reason)
	}
	want := []string{"OutOfcpu", "OutOfmemory", "OutOfexample.com/a", "OutOfexample.com/gpu", "NodeAffinity", "NodeName", "NodePorts", "TaintToleration"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("failures %v, want %v", got, want)
	}
}
