package provider

import (
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-cri/vk-cri/cri"
)

func runtimeStatusOf(conds ...*runtimeapi.RuntimeCondition) *runtimeapi.RuntimeStatus {
	return &runtimeapi.RuntimeStatus{Conditions: conds}
}

func rtCond(typ string, ok bool, reason, msg string) *runtimeapi.RuntimeCondition {
	return &runtimeapi.RuntimeCondition{Type: typ, Status: ok, Reason: reason, Message: msg}
}

var (
	rtReady  = rtCond(runtimeapi.RuntimeReady, true, "", "")
	netReady = rtCond(runtimeapi.NetworkReady, true, "", "")
)

func TestRuntimeProblem(t *testing.T) {
	cases := []struct {
		name string
		st   *runtimeapi.RuntimeStatus
		err  error
		want string
		bug  string
	}{
		{
			name: "all ready",
			st:   runtimeStatusOf(rtReady, netReady),
			want: "",
		},
		{
			name: "all ready, conditions in another order and extra ones",
			st:   runtimeStatusOf(rtCond("SomethingElse", false, "x", "y"), netReady, rtReady),
			want: "",
		},
		{
			name: "status call failed: runtime down",
			err:  status.Error(codes.Unavailable, "connection refused"),
			want: "container runtime is down: rpc error: code = Unavailable desc = connection refused",
		},
		{
			name: "error wins over a status",
			st:   runtimeStatusOf(rtReady, netReady),
			err:  errors.New("deadline exceeded"),
			want: "container runtime is down: deadline exceeded",
		},
		{
			name: "no status yet",
			want: "container runtime status check may not have completed yet",
		},
		{
			name: "no conditions reported",
			st:   runtimeStatusOf(),
			want: "[container runtime not ready: RuntimeReady=false reason:missing message:the runtime did not report it, " +
				"container runtime network not ready: NetworkReady=false reason:missing message:the runtime did not report it]",
		},
		{
			name: "RuntimeReady false",
			st:   runtimeStatusOf(rtCond(runtimeapi.RuntimeReady, false, "ContainerdNotReady", "containerd is starting"), netReady),
			want: "container runtime not ready: RuntimeReady=false reason:ContainerdNotReady message:containerd is starting",
		},
		{
			name: "NetworkReady false with reason and message",
			st: runtimeStatusOf(rtReady, rtCond(runtimeapi.NetworkReady, false, "NetworkPluginNotReady",
				"Network plugin returns error: cni plugin not initialized")),
			want: "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized",
		},
		{
			name: "NetworkReady missing",
			st:   runtimeStatusOf(rtReady),
			want: "container runtime network not ready: NetworkReady=false reason:missing message:the runtime did not report it",
		},
		{
			name: "both not ready: the kubelet reports both",
			st: runtimeStatusOf(rtCond(runtimeapi.RuntimeReady, false, "A", "a"),
				rtCond(runtimeapi.NetworkReady, false, "B", "b")),
			want: "[container runtime not ready: RuntimeReady=false reason:A message:a, container runtime network not ready: NetworkReady=false reason:B message:b]",
			bug:  "runtimeProblem stops at the first problem; the kubelet's Ready message aggregates the runtime and network errors",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := runtimeProblem(tc.st, tc.err)
			if tc.bug != "" {
				diff := ""
				if got != tc.want {
					diff = fmt.Sprintf("- %s\n+ %s", tc.want, got)
				}
				knownBug(t, tc.bug, diff)
				return
			}
			if got != tc.want {
				t.Errorf("runtimeProblem =\n  %q\nwant\n  %q", got, tc.want)
			}
		})
	}
}

func TestNodeConditions(t *testing.T) {
	now := testT0
	pressure := []struct {
		typ             v1.NodeConditionType
		reason, message string
	}{
		{v1.NodeMemoryPressure, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"},
		{v1.NodeDiskPressure, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"},
		{v1.NodePIDPressure, "KubeletHasSufficientPID", "kubelet has sufficient PID available"},
	}
	cases := []struct {
		name       string
		st         *runtimeapi.RuntimeStatus
		err        error
		wantStatus v1.ConditionStatus
		wantReason string
		wantMsg    string
	}{
		{"all ready: KubeletReady", runtimeStatusOf(rtReady, netReady), nil, v1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"},
		{"runtime down", nil, status.Error(codes.Unavailable, "connection refused"), v1.ConditionFalse, "KubeletNotReady",
			"container runtime is down: rpc error: code = Unavailable desc = connection refused"},
		{"RuntimeReady false", runtimeStatusOf(rtCond(runtimeapi.RuntimeReady, false, "R", "m"), netReady), nil, v1.ConditionFalse, "KubeletNotReady",
			"container runtime not ready: RuntimeReady=false reason:R message:m"},
		{"NetworkReady false", runtimeStatusOf(rtReady, rtCond(runtimeapi.NetworkReady, false, "NetworkPluginNotReady", "cni plugin not initialized")), nil,
			v1.ConditionFalse, "KubeletNotReady", "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:cni plugin not initialized"},
		{"not checked yet", nil, nil, v1.ConditionFalse, "KubeletNotReady", "container runtime status check may not have completed yet"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			conds := nodeConditions(tc.st, tc.err, now)
			if len(conds) != 4 {
				t.Fatalf("got %d conditions, want 4: %+v", len(conds), conds)
			}
			for i, p := range pressure {
				c := conds[i]
				if c.Type != p.typ || c.Status != v1.ConditionFalse || c.Reason != p.reason || c.Message != p.message {
					t.Errorf("condition %d = %s/%s/%s/%q, want %s/False/%s/%q", i, c.Type, c.Status, c.Reason, c.Message, p.typ, p.reason, p.message)
				}
			}
			ready := conds[3]
			if ready.Type != v1.NodeReady || ready.Status != tc.wantStatus || ready.Reason != tc.wantReason || ready.Message != tc.wantMsg {
				t.Errorf("Ready = %s/%s/%q, want %s/%s/%q", ready.Status, ready.Reason, ready.Message, tc.wantStatus, tc.wantReason, tc.wantMsg)
			}
			for _, c := range conds {
				if !c.LastHeartbeatTime.Time.Equal(now) || !c.LastTransitionTime.Time.Equal(now) {
					t.Errorf("%s times = %v/%v, want %v", c.Type, c.LastHeartbeatTime, c.LastTransitionTime, now)
				}
			}
			if got := readyOf(conds); got != tc.wantStatus {
				t.Errorf("readyOf = %s, want %s", got, tc.wantStatus)
			}
		})
	}
}

func TestReadyOf(t *testing.T) {
	if got := readyOf(nil); got != v1.ConditionUnknown {
		t.Errorf("readyOf(nil) = %s, want Unknown", got)
	}
	if got := readyOf([]v1.NodeCondition{{Type: v1.NodeDiskPressure, Status: v1.ConditionTrue}}); got != v1.ConditionUnknown {
		t.Errorf("readyOf without Ready = %s, want Unknown", got)
	}
}

func TestCarryTransitions(t *testing.T) {
	before := testT0.Add(-time.Hour)
	now := testT0
	old := nodeConditions(runtimeStatusOf(rtReady, netReady), nil, before)

	t.Run("unchanged statuses keep their transition time, heartbeat moves", func(t *testing.T) {
		cur := carryTransitions(old, nodeConditions(runtimeStatusOf(rtReady, netReady), nil, now))
		for _, c := range cur {
			if !c.LastTransitionTime.Time.Equal(before) {
				t.Errorf("%s lastTransitionTime = %v, want %v", c.Type, c.LastTransitionTime.Time, before)
			}
			if !c.LastHeartbeatTime.Time.Equal(now) {
				t.Errorf("%s lastHeartbeatTime = %v, want %v", c.Type, c.LastHeartbeatTime.Time, now)
			}
		}
	})
	t.Run("changed status gets the new transition time", func(t *testing.T) {
		cur := carryTransitions(old, nodeConditions(nil, errors.New("down"), now))
		want := map[v1.NodeConditionType]time.Time{
			v1.NodeMemoryPressure: before, v1.NodeDiskPressure: before, v1.NodePIDPressure: before, v1.NodeReady: now,
		}
		for _, c := range cur {
			if !c.LastTransitionTime.Time.Equal(want[c.Type]) {
				t.Errorf("%s lastTransitionTime = %v, want %v", c.Type, c.LastTransitionTime.Time, want[c.Type])
			}
		}
	})
	t.Run("same status, other message: transition time kept", func(t *testing.T) {
		down1 := nodeConditions(nil, errors.New("one"), before)
		cur := carryTransitions(down1, nodeConditions(nil, errors.New("two"), now))
		if !cur[3].LastTransitionTime.Time.Equal(before) {
			t.Errorf("Ready lastTransitionTime = %v, want %v", cur[3].LastTransitionTime.Time, before)
		}
	})
	t.Run("old condition without a time does not erase the new one", func(t *testing.T) {
		oldNoTime := []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}
		cur := carryTransitions(oldNoTime, nodeConditions(runtimeStatusOf(rtReady, netReady), nil, now))
		if !cur[3].LastTransitionTime.Time.Equal(now) {
			t.Errorf("Ready lastTransitionTime = %v, want %v", cur[3].LastTransitionTime.Time, now)
		}
	})
	t.Run("no old conditions", func(t *testing.T) {
		cur := carryTransitions(nil, nodeConditions(runtimeStatusOf(rtReady, netReady), nil, now))
		for _, c := range cur {
			if !c.LastTransitionTime.Time.Equal(now) {
				t.Errorf("%s lastTransitionTime = %v, want %v", c.Type, c.LastTransitionTime.Time, now)
			}
		}
	})
	t.Run("updates in place and returns the same slice", func(t *testing.T) {
		cur := nodeConditions(runtimeStatusOf(rtReady, netReady), nil, now)
		out := carryTransitions(old, cur)
		if &out[0] != &cur[0] {
			t.Errorf("carryTransitions returned a new slice")
		}
	})
}

func TestConditionsEqual(t *testing.T) {
	a := nodeConditions(runtimeStatusOf(rtReady, netReady), nil, testT0)
	b := nodeConditions(runtimeStatusOf(rtReady, netReady), nil, testT0.Add(time.Hour))
	if !conditionsEqual(a, b) {
		t.Errorf("conditions differing only in times are not equal")
	}
	c := nodeConditions(nil, errors.New("one"), testT0)
	d := nodeConditions(nil, errors.New("two"), testT0)
	if conditionsEqual(c, d) {
		t.Errorf("conditions with different messages are equal")
	}
	if conditionsEqual(a, c) {
		t.Errorf("conditions with different statuses are equal")
	}
	if conditionsEqual(a, a[:3]) {
		t.Errorf("lists of different lengths are equal")
	}
	if !conditionsEqual(nil, nil) {
		t.Errorf("nil lists are not equal")
	}
	e := append([]v1.NodeCondition(nil), a...)
	e[3].Reason = "Other"
	if conditionsEqual(a, e) {
		t.Errorf("conditions with different reasons are equal")
	}
	if diff := cmp.Diff(a[3].Type, v1.NodeReady); diff != "" {
		t.Errorf("Ready is not last: %s", diff)
	}
}

func TestDescribeNodeMetadata(t *testing.T) {
	owner := metav1.OwnerReference{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "rel-vk-cri", UID: "uid-1"}
	taint := v1.Taint{Key: "dedicated", Value: "vk", Effect: v1.TaintEffectNoSchedule}
	cases := []struct {
		name       string
		opts       NodeOptions
		wantLabels map[string]string
		wantTaints []v1.Taint
		wantOwners []metav1.OwnerReference
	}{
		{
			name: "well-known labels only, virtual-kubelet's dropped",
			wantLabels: map[string]string{
				v1.LabelHostname: "n1", v1.LabelOSStable: runtime.GOOS, v1.LabelArchStable: runtime.GOARCH,
			},
		},
		{
			name: "--node-labels added and winning over well-known ones, taints and owner set",
			opts: NodeOptions{
				Labels:          map[string]string{"pool": "a", v1.LabelHostname: "custom"},
				Taints:          []v1.Taint{taint},
				OwnerReferences: []metav1.OwnerReference{owner},
			},
			wantLabels: map[string]string{
				v1.LabelHostname: "custom", v1.LabelOSStable: runtime.GOOS, v1.LabelArchStable: runtime.GOARCH, "pool": "a",
			},
			wantTaints: []v1.Taint{taint},
			wantOwners: []metav1.OwnerReference{owner},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			np := &NodeProvider{p: &Provider{rt: &cri.Client{}}, opts: tc.opts}
			node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"type": "virtual-kubelet", "kubernetes.io/role": "agent"}}}
			np.describe(node)
			if diff := cmp.Diff(tc.wantLabels, node.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantTaints, node.Spec.Taints, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("taints (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantOwners, node.OwnerReferences, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("owner references (-want +got):\n%s", diff)
			}
		})
	}
}

// The kubelet v1.37 reports whether it runs in a user namespace; so does vk-cri, from the host.
func TestDescribeNodeRunningInUserNamespace(t *testing.T) {
	for _, inUserNS := range []bool{false, true} {
		np := &NodeProvider{p: &Provider{rt: &cri.Client{}}, host: hostFacts{InUserNamespace: inUserNS}}
		node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
		np.describe(node)
		got := node.Status.NodeInfo.RunningInUserNamespace
		if got == nil || *got != inUserNS {
			t.Errorf("host in a user namespace %v: runningInUserNamespace = %v", inUserNS, got)
		}
	}
}

// The node's status shows allocatable as capacity less the reservations, and the provider's
// admission and container configs use the same.
func TestDescribeNodeAllocatableWithReservations(t *testing.T) {
	np := &NodeProvider{p: &Provider{rt: &cri.Client{}}, host: hostFacts{CPUs: 2, MemoryBytes: 4 << 30, StorageBytes: 20 << 30},
		opts: NodeOptions{MaxPods: 110, Reservation: NodeReservation{
			KubeReserved:   rl("cpu", "100m", "memory", "256Mi"),
			SystemReserved: rl("cpu", "150m", "ephemeral-storage", "1Gi"),
		}}}
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	np.describe(node)
	for name, want := range map[v1.ResourceName]string{"cpu": "1750m", "memory": "3740Mi", "ephemeral-storage": "18253610976", "pods": "110"} {
		if q := node.Status.Allocatable[name]; q.Cmp(resource.MustParse(want)) != 0 {
			t.Errorf("allocatable %s = %s, want %s", name, q.String(), want)
		}
	}
	if q := node.Status.Capacity[v1.ResourceCPU]; q.String() != "2" {
		t.Errorf("capacity cpu = %s", q.String())
	}
	if a := np.p.NodeAllocatable()[v1.ResourceCPU]; a.Cmp(resource.MustParse("1750m")) != 0 {
		t.Errorf("provider's allocatable cpu %s", a.String())
	}
	if n := np.p.describedNode.Load(); n == nil || n.Status.Allocatable.Cpu().MilliValue() != 1750 {
		t.Errorf("admission's node %v", n)
	}
}
