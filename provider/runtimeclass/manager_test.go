package runtimeclass

import (
	"context"
	"testing"
	"time"

	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
)

func TestLookupRuntimeHandler(t *testing.T) {
	client := fake.NewClientset(&nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "fast"}, Handler: "crun"})
	m := New(client)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m.Start(ctx)
	if !m.WaitForSync(ctx) {
		t.Fatal("informer did not sync")
	}
	name := func(s string) *string { return &s }

	for _, tc := range []struct {
		class *string
		want  string
	}{{nil, ""}, {name(""), ""}, {name("fast"), "crun"}} {
		got, err := m.LookupRuntimeHandler(tc.class)
		if err != nil || got != tc.want {
			t.Errorf("LookupRuntimeHandler(%v) = %q, %v; want %q", tc.class, got, err, tc.want)
		}
	}

	_, err := m.LookupRuntimeHandler(name("missing"))
	if !apierrors.IsNotFound(err) {
		t.Fatalf("missing RuntimeClass: err = %v, want NotFound", err)
	}
	if want := `runtimeclass.node.k8s.io "missing" not found`; err.Error() != want {
		t.Errorf("missing RuntimeClass: %q, want the kubelet's %q", err, want)
	}

	// A RuntimeClass created later is found once the watch delivers it.
	if _, err := client.NodeV1().RuntimeClasses().Create(ctx, &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "late"}, Handler: "runc"}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(context.Context) (bool, error) {
		h, err := m.LookupRuntimeHandler(name("late"))
		return err == nil && h == "runc", nil
	})
	if err != nil {
		t.Fatalf("RuntimeClass created after the start never found: %v", err)
	}
}
