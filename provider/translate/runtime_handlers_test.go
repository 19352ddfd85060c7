package translate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

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

func TestRuntimeCapabilitiesNodeStatus(t *testing.T) {
	c := CapabilitiesOf(containerd2Status())
	yes, no := ptrTo(true), ptrTo(false)
	// As the reference kubelet on the same containerd reports them (kubectl get node ref).
	want := []v1.NodeRuntimeHandler{
		{Name: "", Features: &v1.NodeRuntimeHandlerFeatures{RecursiveReadOnlyMounts: yes, UserNamespaces: yes}},
		{Name: "crun", Features: &v1.NodeRuntimeHandlerFeatures{RecursiveReadOnlyMounts: no, UserNamespaces: no}},
		{Name: "runc", Features: &v1.NodeRuntimeHandlerFeatures{RecursiveReadOnlyMounts: yes, UserNamespaces: yes}},
	}
	if diff := cmp.Diff(want, c.NodeRuntimeHandlers()); diff != "" {
		t.Errorf("runtimeHandlers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(&v1.NodeFeatures{SupplementalGroupsPolicy: yes}, c.NodeFeatures()); diff != "" {
		t.Errorf("features (-want +got):\n%s", diff)
	}

	// containerd 1.6 reports neither: no handlers, no features.
	old := CapabilitiesOf(&runtimeapi.StatusResponse{Status: containerd2Status().Status})
	if got := old.NodeRuntimeHandlers(); len(got) != 0 {
		t.Errorf("runtime without handlers: runtimeHandlers %v, want none", got)
	}
	if got := old.NodeFeatures(); got != nil {
		t.Errorf("runtime without features: features %v, want none", got)
	}
	var none *RuntimeCapabilities
	if none.NodeRuntimeHandlers() != nil || none.NodeFeatures() != nil {
		t.Error("before the first status: want no handlers and no features")
	}
}

func TestRuntimeCapabilitiesFeatureQueries(t *testing.T) {
	c2 := CapabilitiesOf(containerd2Status())
	c16 := CapabilitiesOf(&runtimeapi.StatusResponse{})
	cases := []struct {
		name        string
		caps        *RuntimeCapabilities
		handler     string
		userns      bool
		usernsErr   string
		recursiveRO bool
	}{
		{"default handler", &c2, "", true, "", true},
		{"runc", &c2, "runc", true, "", true},
		{"crun without features", &c2, "crun", false, "", false},
		{"unknown handler", &c2, "kata", false, `the handler "kata" is not known`, false},
		{"runtime without handlers (containerd 1.6)", &c16, "", false, "", false},
		{"runtime without handlers, named handler", &c16, "crun", false, "", false},
		{"no status yet", nil, "", false, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ok, err := tc.caps.SupportsUserNamespaces(tc.handler)
			if ok != tc.userns || errString(err) != tc.usernsErr {
				t.Errorf("supportsUserNamespaces = %v, %v; want %v, %q", ok, err, tc.userns, tc.usernsErr)
			}
			if got := tc.caps.SupportsRecursiveReadOnly(tc.handler); got != tc.recursiveRO {
				t.Errorf("supportsRecursiveReadOnly = %v, want %v", got, tc.recursiveRO)
			}
		})
	}
}
