package provider

import (
	"context"
	"testing"

	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

func TestRemoveFromAPIDeletesOnlyTheSamePod(t *testing.T) {
	stopped := v1.ContainerStatus{Name: "a", State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 0}}}
	apiPod := func(uid types.UID) *v1.Pod {
		return &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: uid},
			Status:     v1.PodStatus{ContainerStatuses: []v1.ContainerStatus{stopped}},
		}
	}
	for _, tc := range []struct {
		name     string
		inAPI    types.UID
		deleting types.UID
		wantGone bool
	}{
		{"the terminated pod is deleted", "uid-1", "uid-1", true},
		{"a successor under the same name is left alone", "uid-2", "uid-1", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewSimpleClientset(apiPod(tc.inAPI))
			p := &Provider{cfg: Config{Pods: client.CoreV1()}, log: logrus.NewEntry(logrus.New())}
			p.removeFromAPI(context.Background(), &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: tc.deleting}})
			_, err := client.CoreV1().Pods("ns").Get(context.Background(), "p", metav1.GetOptions{})
			if gone := err != nil; gone != tc.wantGone {
				t.Fatalf("pod gone = %v, want %v (err %v)", gone, tc.wantGone, err)
			}
			if !tc.wantGone {
				return
			}
			for _, a := range client.Actions() {
				if d, ok := a.(clienttesting.DeleteActionImpl); ok {
					opts := d.GetDeleteOptions()
					if opts.Preconditions == nil || opts.Preconditions.UID == nil || *opts.Preconditions.UID != tc.deleting ||
						opts.GracePeriodSeconds == nil || *opts.GracePeriodSeconds != 0 {
						t.Fatalf("delete options %+v: want grace 0 and the pod's UID as precondition", opts)
					}
					return
				}
			}
			t.Fatal("no delete call")
		})
	}
}
