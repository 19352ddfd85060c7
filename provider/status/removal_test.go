package status

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

// The API server enforces the UID preconditions; the test checks that both calls carry them.
func TestRemoveTerminatedWritesTheFinalStatusThenDeletesThatPodOnly(t *testing.T) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "uid-1"}}
	client := fake.NewSimpleClientset(pod.DeepCopy())
	final := &v1.PodStatus{Phase: v1.PodFailed}

	if err := RemoveTerminated(context.Background(), client.CoreV1(), pod, final); err != nil {
		t.Fatal(err)
	}

	var verbs []string
	for _, a := range client.Actions() {
		verbs = append(verbs, a.GetVerb()+"/"+a.GetSubresource())
		switch act := a.(type) {
		case clienttesting.PatchActionImpl:
			var body struct {
				Metadata struct{ UID string } `json:"metadata"`
				Status   v1.PodStatus         `json:"status"`
			}
			if err := json.Unmarshal(act.GetPatch(), &body); err != nil {
				t.Fatal(err)
			}
			if body.Metadata.UID != "uid-1" || body.Status.Phase != v1.PodFailed || act.GetSubresource() != "status" {
				t.Errorf("status patch %s: want the final status with the pod's UID", act.GetPatch())
			}
		case clienttesting.DeleteActionImpl:
			opts := act.GetDeleteOptions()
			if opts.Preconditions == nil || opts.Preconditions.UID == nil || *opts.Preconditions.UID != "uid-1" ||
				opts.GracePeriodSeconds == nil || *opts.GracePeriodSeconds != 0 {
				t.Errorf("delete options %+v: want grace 0 and the pod's UID as precondition", opts)
			}
		}
	}
	if len(verbs) != 2 || verbs[0] != "patch/status" || verbs[1] != "delete/" {
		t.Fatalf("calls %v, want the status patch then the delete", verbs)
	}
	if _, err := client.CoreV1().Pods("ns").Get(context.Background(), "p", metav1.GetOptions{}); err == nil {
		t.Fatal("pod still there")
	}
}

// A conflict or NotFound on the status write means a successor holds the name or the pod is
// gone: nothing is deleted. Any other failure of the write is returned, and the pod is still
// deleted.
func TestRemoveTerminatedStopsAtASuccessorAndReportsFailures(t *testing.T) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "uid-1"}}
	for _, tc := range []struct {
		name       string
		patchErr   error
		wantDelete bool
		wantErr    bool
	}{
		{"a successor under the name", apierrors.NewConflict(v1.Resource("pods"), "p", errors.New("uid")), false, false},
		{"gone already", apierrors.NewNotFound(v1.Resource("pods"), "p"), false, false},
		{"the status write fails", apierrors.NewInternalError(errors.New("etcd")), true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewSimpleClientset(pod.DeepCopy())
			client.PrependReactor("patch", "pods", func(clienttesting.Action) (bool, runtime.Object, error) {
				return true, nil, tc.patchErr
			})
			err := RemoveTerminated(context.Background(), client.CoreV1(), pod, &v1.PodStatus{Phase: v1.PodSucceeded})
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want one: %v", err, tc.wantErr)
			}
			deleted := false
			for _, a := range client.Actions() {
				deleted = deleted || a.GetVerb() == "delete"
			}
			if deleted != tc.wantDelete {
				t.Fatalf("deleted = %v, want %v", deleted, tc.wantDelete)
			}
		})
	}
	// Without a final status, the pod is only deleted.
	client := fake.NewSimpleClientset(pod.DeepCopy())
	if err := RemoveTerminated(context.Background(), client.CoreV1(), pod, nil); err != nil {
		t.Fatal(err)
	}
	if acts := client.Actions(); len(acts) != 1 || acts[0].GetVerb() != "delete" {
		t.Fatalf("calls %v, want one delete", acts)
	}
}
