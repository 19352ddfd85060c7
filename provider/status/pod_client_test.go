package status

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/virtual-kubelet/virtual-kubelet/errdefs"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

// The controller's status update carries the provider's conditions; a readiness gate's
// condition the API holds at that resourceVersion is kept, not overwritten.
func TestStatusUpdatesKeepConditionsOthersWrote(t *testing.T) {
	gate := v1.PodCondition{Type: "k8s.io/gate", Status: v1.ConditionTrue}
	inAPI := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "u1", ResourceVersion: "5"},
		Status: v1.PodStatus{Conditions: []v1.PodCondition{gate, {Type: v1.PodReady, Status: v1.ConditionFalse}}}}
	for _, tc := range []struct {
		name     string
		rv       string
		wantGate bool
	}{
		{"the cached pod of the same version gives the foreign conditions", "5", true},
		{"a stale version is written as is (the API refuses it with a conflict)", "4", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewSimpleClientset(inAPI.DeepCopy())
			pods := providerOwnedPods{PodsGetter: client.CoreV1(), owner: fakeOwner{},
				current: func(namespace, name string) (*v1.Pod, error) { return inAPI.DeepCopy(), nil }}
			ours := inAPI.DeepCopy()
			ours.ResourceVersion = tc.rv
			ours.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}}
			got, err := pods.Pods("ns").UpdateStatus(context.Background(), ours, metav1.UpdateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want := []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}}
			if tc.wantGate {
				want = append([]v1.PodCondition{gate}, want...)
			}
			if diff := cmp.Diff(want, got.Status.Conditions); diff != "" {
				t.Errorf("conditions written (-want +got):\n%s", diff)
			}
		})
	}
}

type namedPods struct {
	asyncPodHandler
	pods map[string]*v1.Pod
}

func (n namedPods) GetPod(_ context.Context, namespace, name string) (*v1.Pod, error) {
	if p, ok := n.pods[namespace+"/"+name]; ok {
		return p, nil
	}
	return nil, errdefs.NotFoundf("no pod %s/%s", namespace, name)
}

func TestControllerDoesNotTakeATerminatingPodForItsSuccessor(t *testing.T) {
	running := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "same", UID: "old"}}
	for _, tc := range []struct {
		name     string
		inAPI    *v1.Pod
		wantUID  types.UID
		notFound bool
	}{
		{"the API's pod is the provider's", &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "same", UID: "old"}}, "old", false},
		{"a successor under the same name hides the terminating pod", &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "same", UID: "new"}}, "", true},
		{"a pod gone from the API is still the provider's (the controller deletes it)", nil, "old", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			view := controllerPodView{
				asyncPodHandler: namedPods{pods: map[string]*v1.Pod{"ns/same": running}},
				current: func(namespace, name string) (*v1.Pod, error) {
					if tc.inAPI == nil {
						return nil, apierrors.NewNotFound(v1.Resource("pods"), name)
					}
					return tc.inAPI, nil
				},
			}
			got, err := view.GetPod(context.Background(), "ns", "same")
			if tc.notFound {
				if !errdefs.IsNotFound(err) || got != nil {
					t.Fatalf("GetPod = %v, %v; want a NotFound error", got, err)
				}
				return
			}
			if err != nil || got.UID != tc.wantUID {
				t.Fatalf("GetPod = %v, %v; want UID %s", got, err, tc.wantUID)
			}
		})
	}
}
