package main

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// The release's nodes are tainted and their pods deleted; other nodes and their pods are left
// alone; drain returns once no pod is bound to the nodes. The fake client does not filter by
// field selector, so the reactor below does (as the API server does for spec.nodeName).
func TestDrainNodesDeletesOnlyTheReleasesPods(t *testing.T) {
	node := func(name, release string) *v1.Node {
		return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app.kubernetes.io/instance": release}}}
	}
	pod := func(name, node string) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, Spec: v1.PodSpec{NodeName: node}}
	}
	client := fake.NewClientset(node("a", "vk"), node("b", "vk"), node("host", "other"),
		pod("pa", "a"), pod("pb", "b"), pod("keep", "host"))
	client.PrependReactor("list", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		sel := a.(k8stesting.ListAction).GetListRestrictions().Fields
		all, err := client.Tracker().List(v1.SchemeGroupVersion.WithResource("pods"), v1.SchemeGroupVersion.WithKind("Pod"), "")
		if err != nil {
			return true, nil, err
		}
		out := &v1.PodList{}
		for _, p := range all.(*v1.PodList).Items {
			if sel.Matches(fieldsOf(&p)) {
				out.Items = append(out.Items, p)
			}
		}
		return true, out, nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := drainNodes(ctx, client, "app.kubernetes.io/instance=vk", 10*time.Millisecond, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"pa", "pb"} {
		if _, err := client.CoreV1().Pods("ns").Get(ctx, name, metav1.GetOptions{}); err == nil {
			t.Errorf("pod %s on a release node is still there", name)
		}
	}
	if _, err := client.CoreV1().Pods("ns").Get(ctx, "keep", metav1.GetOptions{}); err != nil {
		t.Errorf("pod on another node: %v", err)
	}
	for _, tc := range []struct {
		node    string
		tainted bool
	}{{"a", true}, {"b", true}, {"host", false}} {
		n, _ := client.CoreV1().Nodes().Get(ctx, tc.node, metav1.GetOptions{})
		has := len(n.Spec.Taints) == 1 && n.Spec.Taints[0].Key == UninstallTaint && n.Spec.Taints[0].Effect == v1.TaintEffectNoExecute
		if has != tc.tainted {
			t.Errorf("node %s: taints %v, want tainted %v", tc.node, n.Spec.Taints, tc.tainted)
		}
	}
}

// A pod that does not go in time is an error naming it.
func TestDrainNodesTimesOut(t *testing.T) {
	now := metav1.Now()
	stuck := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "stuck", Namespace: "ns", DeletionTimestamp: &now, Finalizers: []string{"x"}}, Spec: v1.PodSpec{NodeName: "a"}}
	client := fake.NewClientset(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"r": "vk"}}}, stuck)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err := drainNodes(ctx, client, "r=vk", 10*time.Millisecond, io.Discard)
	if err == nil {
		t.Fatal("drain returned while a pod is still on the node")
	}
	if got := err.Error(); !strings.Contains(got, "ns/stuck") {
		t.Errorf("error %q does not name the pod left", got)
	}
}

func fieldsOf(p *v1.Pod) fields.Set { return fields.Set{"spec.nodeName": p.Spec.NodeName} }
