package provider

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	cadvisorapi "github.com/google/cadvisor/lib/model"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"
)

// NodeOptions describe the node vk-cri registers.
type NodeOptions struct {
	Version     string // reported as kubeletVersion
	RootDir     string
	MaxPods     int
	KubeletPort int32
	// Labels are added to the node's well-known labels (and win over them, as the kubelet's
	// --node-labels do). virtual-kubelet applies them at every start, not only at registration.
	Labels map[string]string
	// Taints the node is registered with; like the kubelet's --register-with-taints they are
	// set only when the Node object is created.
	Taints []v1.Taint
	// OwnerReferences are set on the Node object when it is created, so that the garbage
	// collector deletes the node together with its owner.
	OwnerReferences []metav1.OwnerReference
	// DeclaredFeatures are the feature names the node declares to the control plane (e.g. that
	// it serves WebSocket streams itself).
	DeclaredFeatures []string
	// StatusPeriod is how often the runtime's health is checked.
	StatusPeriod time.Duration
	// HeartbeatPeriod is how often the Ready condition is re-sent unchanged.
	HeartbeatPeriod time.Duration
	// Machine, when cAdvisor runs, is the source of the node's CPU and memory capacity and
	// machine identity, as with the kubelet.
	Machine *cadvisorapi.MachineInfo
	// Pressure, when set, tells which pressure conditions are True (the eviction manager).
	Pressure func() map[v1.NodeConditionType]bool
	// Reservation is what allocatable keeps from pods (kube-reserved, system-reserved, hard
	// eviction thresholds).
	Reservation NodeReservation
	// Capacity, when set, is the node's declared capacity of cpu, memory and ephemeral-storage,
	// less than the host's (node_capacity.go).
	Capacity v1.ResourceList
}

// Node condition reasons and messages, as the kubelet writes them.
const (
	reasonKubeletReady    = "KubeletReady"
	reasonKubeletNotReady = "KubeletNotReady"
)

// NodeProvider keeps the node's status: capacity and identity from the host and the runtime,
// and a Ready condition that follows the runtime's own RuntimeReady and NetworkReady.
type NodeProvider struct {
	p    *Provider
	opts NodeOptions
	host hostFacts

	mu   sync.Mutex
	node *v1.Node
}

// NewNodeProvider fills node (the object virtual-kubelet registers) from the host and runtime.
func (p *Provider) NewNodeProvider(node *v1.Node, opts NodeOptions) (*NodeProvider, error) {
	if opts.MaxPods <= 0 {
		opts.MaxPods = 110
	}
	if opts.StatusPeriod <= 0 {
		opts.StatusPeriod = 5 * time.Second
	}
	if opts.HeartbeatPeriod <= 0 {
		opts.HeartbeatPeriod = time.Minute
	}
	host, err := readHostFacts(opts.RootDir)
	if err != nil {
		return nil, fmt.Errorf("reading host facts: %w", err)
	}
	host.applyMachineInfo(opts.Machine)
	if err := host.declareCapacity(opts.Capacity); err != nil {
		return nil, err
	}
	if _, _, err := host.resources(opts.MaxPods, opts.Reservation); err != nil {
		return nil, err
	}
	np := &NodeProvider{p: p, opts: opts, host: host}
	np.describe(node)
	np.node = node.DeepCopy()
	return np, nil
}

// describe sets everything of the node that does not change while vk-cri runs.
func (np *NodeProvider) describe(node *v1.Node) {
	if node.Labels == nil {
		node.Labels = map[string]string{}
	}
	// virtual-kubelet's defaults mark the node as virtual; vk-cri runs pods like a kubelet.
	delete(node.Labels, "type")
	delete(node.Labels, "kubernetes.io/role")
	node.Labels[v1.LabelHostname] = node.Name
	node.Labels[v1.LabelOSStable] = runtime.GOOS
	node.Labels[v1.LabelArchStable] = runtime.GOARCH
	for k, v := range np.opts.Labels {
		node.Labels[k] = v
	}
	node.Spec.Taints = append([]v1.Taint(nil), np.opts.Taints...)
	node.OwnerReferences = append([]metav1.OwnerReference(nil), np.opts.OwnerReferences...)

	// Checked by NewNodeProvider: a reservation beyond the capacity leaves allocatable at zero.
	node.Status.Capacity, node.Status.Allocatable, _ = np.host.resources(np.opts.MaxPods, np.opts.Reservation)
	np.p.setNodeCapacity(nodeCapacity{MemoryBytes: np.host.MemoryBytes, Allocatable: node.Status.Allocatable.DeepCopy()})
	node.Status.Addresses = nil
	for _, ip := range np.p.cfg.NodeIPs {
		node.Status.Addresses = append(node.Status.Addresses, v1.NodeAddress{Type: v1.NodeInternalIP, Address: ip})
	}
	if np.host.Hostname != "" {
		node.Status.Addresses = append(node.Status.Addresses, v1.NodeAddress{Type: v1.NodeHostName, Address: np.host.Hostname})
	}
	node.Status.DaemonEndpoints.KubeletEndpoint.Port = np.opts.KubeletPort
	node.Status.NodeInfo = v1.NodeSystemInfo{
		MachineID:               np.host.MachineID,
		SystemUUID:              np.host.SystemUUID,
		BootID:                  np.host.BootID,
		KernelVersion:           np.host.KernelVersion,
		OSImage:                 np.host.OSImage,
		ContainerRuntimeVersion: np.p.rt.RuntimeVersionString(),
		KubeletVersion:          np.opts.Version,
		OperatingSystem:         runtime.GOOS,
		Architecture:            runtime.GOARCH,
		RunningInUserNamespace:  ptr.To(np.host.InUserNamespace),
	}
	node.Status.DeclaredFeatures = append([]string(nil), np.opts.DeclaredFeatures...)
	node.Status.Phase = ""
	node.Status.Conditions = nodeConditions(nil, nil, time.Now())
	np.p.setDescribedNode(node)
}

// Ping tells virtual-kubelet that vk-cri is alive, which keeps the lease renewed. The runtime's
// health is reported in the Ready condition instead, as the kubelet does.
func (np *NodeProvider) Ping(ctx context.Context) error {
	return ctx.Err()
}

// NotifyNodeStatus checks the runtime every StatusPeriod and sends the node's status whenever
// a condition changes, and at least every HeartbeatPeriod.
func (np *NodeProvider) NotifyNodeStatus(ctx context.Context, cb func(*v1.Node)) {
	go func() {
		t := time.NewTicker(np.opts.StatusPeriod)
		defer t.Stop()
		lastSent := time.Time{}
		for {
			st, err := np.runtimeStatus(ctx)
			imagesChanged := np.refreshImages(ctx)
			np.mu.Lock()
			old := np.node.Status.Conditions
			conds := withPressure(nodeConditions(st, err, time.Now()), np.pressure())
			changed := !conditionsEqual(old, conds)
			runtimeChanged := np.applyRuntimeCapabilities(np.node)
			if imagesChanged && !changed && time.Since(lastSent) < np.opts.HeartbeatPeriod {
				// A new image is news, but not a condition change worth a log line.
				lastSent = time.Time{}
			}
			if changed || runtimeChanged || time.Since(lastSent) >= np.opts.HeartbeatPeriod {
				np.node.Status.Conditions = carryTransitions(old, conds)
				out := np.node.DeepCopy()
				np.mu.Unlock()
				if changed {
					np.p.log.WithFields(map[string]any{"ready": readyOf(conds), "pressure": np.pressure()}).Info("node status changed")
				}
				cb(out)
				lastSent = time.Now()
			} else {
				np.mu.Unlock()
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
}

func (np *NodeProvider) pressure() map[v1.NodeConditionType]bool {
	if np.opts.Pressure == nil {
		return nil
	}
	return np.opts.Pressure()
}

func (np *NodeProvider) runtimeStatus(ctx context.Context) (*runtimeapi.RuntimeStatus, error) {
	sctx, cancel := context.WithTimeout(ctx, np.opts.StatusPeriod)
	defer cancel()
	resp, err := np.p.rt.Runtime.Status(sctx, false)
	if err != nil {
		return nil, err
	}
	np.p.observeRuntimeStatus(resp)
	return resp.GetStatus(), nil
}

func readyOf(conds []v1.NodeCondition) v1.ConditionStatus {
	for _, c := range conds {
		if c.Type == v1.NodeReady {
			return c.Status
		}
	}
	return v1.ConditionUnknown
}

// nodeConditions derives the node's conditions from the runtime's status (or the error getting
// it), with clear pressure conditions (withPressure sets them from measurements).
func nodeConditions(st *runtimeapi.RuntimeStatus, statusErr error, now time.Time) []v1.NodeCondition {
	t := metav1.NewTime(now)
	ready := v1.NodeCondition{Type: v1.NodeReady, Status: v1.ConditionTrue, Reason: reasonKubeletReady, Message: "kubelet is posting ready status", LastHeartbeatTime: t, LastTransitionTime: t}
	if msg := runtimeProblem(st, statusErr); msg != "" {
		ready.Status, ready.Reason, ready.Message = v1.ConditionFalse, reasonKubeletNotReady, msg
	}
	return []v1.NodeCondition{
		{Type: v1.NodeMemoryPressure, Status: v1.ConditionFalse, Reason: "KubeletHasSufficientMemory", Message: "kubelet has sufficient memory available", LastHeartbeatTime: t, LastTransitionTime: t},
		{Type: v1.NodeDiskPressure, Status: v1.ConditionFalse, Reason: "KubeletHasNoDiskPressure", Message: "kubelet has no disk pressure", LastHeartbeatTime: t, LastTransitionTime: t},
		{Type: v1.NodePIDPressure, Status: v1.ConditionFalse, Reason: "KubeletHasSufficientPID", Message: "kubelet has sufficient PID available", LastHeartbeatTime: t, LastTransitionTime: t},
		ready,
	}
}

// runtimeProblem explains why the runtime is not ready, or returns "" when it is.
func runtimeProblem(st *runtimeapi.RuntimeStatus, statusErr error) string {
	if statusErr != nil {
		return fmt.Sprintf("container runtime is down: %v", statusErr)
	}
	if st == nil {
		return "container runtime status check may not have completed yet"
	}
	var rtReady, netReady *runtimeapi.RuntimeCondition
	for _, c := range st.Conditions {
		switch c.Type {
		case runtimeapi.RuntimeReady:
			rtReady = c
		case runtimeapi.NetworkReady:
			netReady = c
		}
	}
	// Both problems are reported, in the kubelet's aggregate error form "[a, b]".
	var problems []error
	if rtReady == nil || !rtReady.Status {
		problems = append(problems, fmt.Errorf("container runtime not ready: %s", describeCondition(runtimeapi.RuntimeReady, rtReady)))
	}
	if netReady == nil || !netReady.Status {
		problems = append(problems, fmt.Errorf("container runtime network not ready: %s", describeCondition(runtimeapi.NetworkReady, netReady)))
	}
	if len(problems) == 0 {
		return ""
	}
	return utilerrors.NewAggregate(problems).Error()
}

func describeCondition(typ string, c *runtimeapi.RuntimeCondition) string {
	if c == nil {
		return typ + "=false reason:missing message:the runtime did not report it"
	}
	return fmt.Sprintf("%s=%v reason:%s message:%s", typ, c.Status, c.Reason, c.Message)
}

func conditionsEqual(a, b []v1.NodeCondition) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Type != b[i].Type || a[i].Status != b[i].Status || a[i].Reason != b[i].Reason || a[i].Message != b[i].Message {
			return false
		}
	}
	return true
}

// carryTransitions keeps a condition's lastTransitionTime while its status stays the same.
func carryTransitions(old, cur []v1.NodeCondition) []v1.NodeCondition {
	for i := range cur {
		for _, o := range old {
			if o.Type == cur[i].Type && o.Status == cur[i].Status && !o.LastTransitionTime.IsZero() {
				cur[i].LastTransitionTime = o.LastTransitionTime
			}
		}
	}
	return cur
}
