package main

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestParseTaints(t *testing.T) {
	cases := []struct {
		name    string
		specs   []string
		want    []v1.Taint
		wantErr string
	}{
		{name: "none"},
		{
			name:  "key=value:Effect and key:Effect",
			specs: []string{"dedicated=vk:NoSchedule", "vk-cri.io/test:PreferNoSchedule", "x=:NoExecute"},
			want: []v1.Taint{
				{Key: "dedicated", Value: "vk", Effect: v1.TaintEffectNoSchedule},
				{Key: "vk-cri.io/test", Effect: v1.TaintEffectPreferNoSchedule},
				{Key: "x", Effect: v1.TaintEffectNoExecute},
			},
		},
		{name: "no effect", specs: []string{"a=b"}, wantErr: `"a=b": want key=value:Effect or key:Effect`},
		{name: "empty effect", specs: []string{"a=b:"}, wantErr: "want key=value:Effect"},
		{name: "unknown effect", specs: []string{"a=b:NoRun"}, wantErr: "effect must be NoSchedule, PreferNoSchedule or NoExecute"},
		{name: "bad key", specs: []string{"-a:NoSchedule"}, wantErr: `"-a:NoSchedule": invalid key`},
		{name: "empty key", specs: []string{"=v:NoSchedule"}, wantErr: "invalid key"},
		{name: "bad value", specs: []string{"a=b c:NoSchedule"}, wantErr: "invalid value"},
		{name: "same key and effect twice", specs: []string{"a=1:NoSchedule", "a=2:NoSchedule"}, wantErr: "taint a:NoSchedule given twice"},
		{
			name:  "same key, other effects",
			specs: []string{"a=1:NoSchedule", "a=1:NoExecute"},
			want:  []v1.Taint{{Key: "a", Value: "1", Effect: v1.TaintEffectNoSchedule}, {Key: "a", Value: "1", Effect: v1.TaintEffectNoExecute}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseTaints(tc.specs)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parseTaints(%q) error = %v, want it to contain %q", tc.specs, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("taints (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNodeOwnerReferences(t *testing.T) {
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "rel-vk-cri", UID: "uid-1"}}
	client := fake.NewClientset(role)
	cases := []struct {
		name    string
		role    string
		want    []metav1.OwnerReference
		wantErr string
	}{
		{name: "no owner asked"},
		{
			name: "existing role",
			role: "rel-vk-cri",
			want: []metav1.OwnerReference{{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "rel-vk-cri", UID: "uid-1"}},
		},
		{name: "missing role", role: "gone", wantErr: "--node-owner-clusterrole: reading ClusterRole gone"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := nodeOwnerReferences(context.Background(), client, tc.role)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("owner references (-want +got):\n%s", diff)
			}
		})
	}
}
