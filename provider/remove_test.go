package provider

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

// The API server enforces the UID preconditions; the test checks that both calls carry them.
func TestRemoveFromAPIWritesTheFinalStatusThenDeletesThatPodOnly(t *testing.T) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "uid-1"}}
	client := fake.NewSimpleClientset(pod.DeepCopy())
	p := &Provider{cfg: Config{Pods: client.CoreV1()}, log: logrus.NewEntry(logrus.New())}
	final := &v1.PodStatus{Phase: v1.PodFailed}

	p.removeFromAPI(context.Background(), pod, final)

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
