package main

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
)

type fakeOwner struct{ owns map[types.UID]bool }

func (f fakeOwner) TakeOverRemoval(pod *v1.Pod) bool { return f.owns[pod.UID] }

func TestForceDeletionsOfOwnedPodsGoToTheProvider(t *testing.T) {
	now := metav1.Now()
	for _, tc := range []struct {
		name     string
		owned    bool
		withUID  bool
		wantGone bool
	}{
		{"a pod the provider runs stays until the provider removes it", true, true, false},
		{"a pod the provider does not run is deleted", false, true, true},
		{"a deletion without UID precondition is passed through", true, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "u1", DeletionTimestamp: &now}}
			client := fake.NewSimpleClientset(pod)
			pods := providerOwnedPods{PodsGetter: client.CoreV1(), owner: fakeOwner{owns: map[types.UID]bool{"u1": tc.owned}}}
			opts := metav1.DeleteOptions{}
			if tc.withUID {
				uid := types.UID("u1")
				opts.Preconditions = &metav1.Preconditions{UID: &uid}
			}
			if err := pods.Pods("ns").Delete(context.Background(), "p", opts); err != nil {
				t.Fatal(err)
			}
			_, err := client.CoreV1().Pods("ns").Get(context.Background(), "p", metav1.GetOptions{})
			if gone := err != nil; gone != tc.wantGone {
				t.Fatalf("gone = %v, want %v", gone, tc.wantGone)
			}
		})
	}
}
