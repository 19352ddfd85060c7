//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

func TestNodeRegistersReadyWithHostFacts(t *testing.T) {
	n, err := s.kube.CoreV1().Nodes().Get(ctxFor(t, 10*time.Second), nodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("getting node: %v", err)
	}
	ready := false
	for _, c := range n.Status.Conditions {
		if c.Type == v1.NodeReady {
			ready = c.Status == v1.ConditionTrue && c.Reason == "KubeletReady"
		}
	}
	if !ready {
		t.Errorf("node not Ready with reason KubeletReady: %+v", n.Status.Conditions)
	}
	capacity := n.Status.Capacity
	if capacity.Cpu().Value() < 1 {
		t.Errorf("cpu capacity %v", capacity.Cpu())
	}
	if capacity.Memory().Value() < 1<<30 {
		t.Errorf("memory capacity %v is not the host's", capacity.Memory())
	}
	if capacity.Pods().Value() != 110 {
		t.Errorf("pods capacity %v, want 110", capacity.Pods())
	}
	if st := capacity.StorageEphemeral(); st.Value() <= 0 {
		t.Errorf("ephemeral-storage capacity %v", st)
	}
	if n.Status.Allocatable.Memory().Cmp(*capacity.Memory()) >= 0 {
		t.Errorf("allocatable memory %v should be below capacity %v (eviction threshold)", n.Status.Allocatable.Memory(), capacity.Memory())
	}
	info := n.Status.NodeInfo
	if want := runtimeVersionPrefix(s.env["CONTAINERD_LANE"]); !strings.HasPrefix(info.ContainerRuntimeVersion, want) {
		t.Errorf("containerRuntimeVersion %q, want the prefix %q of the stack's containerd lane", info.ContainerRuntimeVersion, want)
	}
	if info.KubeletVersion == "" || info.KernelVersion == "" || info.OSImage == "" || info.Architecture == "" || info.OperatingSystem != "linux" {
		t.Errorf("incomplete nodeInfo: %+v", info)
	}
	var internalIP string
	for _, a := range n.Status.Addresses {
		if a.Type == v1.NodeInternalIP {
			internalIP = a.Address
		}
	}
	if internalIP != s.env["NODE_IP"] {
		t.Errorf("InternalIP %q, want %q", internalIP, s.env["NODE_IP"])
	}
	if fmt.Sprint(n.Status.DaemonEndpoints.KubeletEndpoint.Port) != nodePort {
		t.Errorf("kubelet endpoint port %d", n.Status.DaemonEndpoints.KubeletEndpoint.Port)
	}
}

func TestNodeLeaseIsRenewed(t *testing.T) {
	ctx := ctxFor(t, 90*time.Second)
	get := func() (time.Time, error) {
		l, err := s.kube.CoordinationV1().Leases("kube-node-lease").Get(ctx, nodeName, metav1.GetOptions{})
		if err != nil || l.Spec.RenewTime == nil {
			return time.Time{}, err
		}
		return l.Spec.RenewTime.Time, nil
	}
	first, err := get()
	if err != nil || first.IsZero() {
		t.Fatalf("node lease: %v (renewTime %v)", err, first)
	}
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 60*time.Second, false, func(context.Context) (bool, error) {
		now, err := get()
		return err == nil && now.After(first), nil
	})
	if err != nil {
		t.Fatalf("lease renewTime stayed at %v", first)
	}
}

// runtimeVersionPrefix is the containerRuntimeVersion prefix of the containerd lane the stack runs
// (CONTAINERD_LANE in the stack env: "2" or "1.6", hack/containerd.sh); an env written before the
// lanes existed has none.
func runtimeVersionPrefix(lane string) string {
	if lane == "" {
		return "containerd://"
	}
	return "containerd://" + lane + "."
}
