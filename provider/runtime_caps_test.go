package provider

import (
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	v1 "k8s.io/api/core/v1"
)

// Handlers and features are taken only from a ready runtime's status, as the kubelet does.
// containerd2Status is what containerd 2.4.2 on the shared stack answers to Status: the default
// handler and runc with both features, the crun wrapper with none.
func containerd2Status() *runtimeapi.StatusResponse {
	both := &runtimeapi.RuntimeHandlerFeatures{RecursiveReadOnlyMounts: true, UserNamespaces: true}
	return &runtimeapi.StatusResponse{
		Status: &runtimeapi.RuntimeStatus{Conditions: []*runtimeapi.RuntimeCondition{
			{Type: runtimeapi.RuntimeReady, Status: true}, {Type: runtimeapi.NetworkReady, Status: true}}},
		RuntimeHandlers: []*runtimeapi.RuntimeHandler{
			{Name: "", Features: both}, {Name: "crun"}, {Name: "runc", Features: both}},
		Features: &runtimeapi.RuntimeFeatures{SupplementalGroupsPolicy: true, UserNamespacesHostNetwork: true},
	}
}

func TestObserveRuntimeStatusOnlyWhenReady(t *testing.T) {
	p := &Provider{}
	notReady := containerd2Status()
	notReady.Status.Conditions[0].Status = false
	p.observeRuntimeStatus(notReady)
	if p.runtimeCaps() != nil {
		t.Fatal("took the handlers of a runtime that is not ready")
	}
	p.observeRuntimeStatus(containerd2Status())
	if got := len(p.runtimeCaps().Handlers); got != 3 {
		t.Fatalf("handlers after a ready status: %d, want 3", got)
	}
	np := &NodeProvider{p: p}
	node := &v1.Node{}
	if !np.applyRuntimeCapabilities(node) {
		t.Error("first apply: want a change")
	}
	if np.applyRuntimeCapabilities(node) {
		t.Error("second apply of the same status: want no change")
	}
	if len(node.Status.RuntimeHandlers) != 3 || node.Status.Features == nil {
		t.Errorf("node status: %+v", node.Status)
	}
}
