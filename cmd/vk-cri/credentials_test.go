package main

import (
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes/fake"
)

// The owner ClusterRole is read with the API client unless the node runs with its own identity,
// which may not read ClusterRoles: then with the pod's service account, and outside a pod that is
// a clear error at start.
func TestOwnerLookupClientKeepsClusterRoleReadsOffTheNodeIdentity(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBERNETES_SERVICE_PORT", "")
	api := fake.NewClientset()
	for _, tc := range []struct {
		name    string
		o       options
		wantAPI bool
		wantErr string
	}{
		{name: "no owner", o: options{BootstrapKubeconfig: "b"}, wantAPI: true},
		{name: "owner without node identity", o: options{NodeOwnerClusterRole: "r"}, wantAPI: true},
		{name: "owner with node identity outside a pod", o: options{NodeOwnerClusterRole: "r", BootstrapKubeconfig: "b"}, wantErr: "pod's service account"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ownerLookupClient(&tc.o, api)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantAPI && got != api {
				t.Errorf("not the API client")
			}
		})
	}
}
