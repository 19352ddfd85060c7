package provider

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDeletionGracePeriod(t *testing.T) {
	withGrace := func(g int64) *v1.Pod {
		p := testPod(withContainers(ctr("a")))
		p.Spec.TerminationGracePeriodSeconds = &g
		return p
	}
	deletedWith := func(g int64) *v1.Pod {
		now := metav1.Now()
		p := testPod(withContainers(ctr("a")))
		p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &now, &g
		return p
	}
	// What virtual-kubelet hands over for a pod found in the runtime and absent from the API:
	// vk-cri's own view of it, names only.
	dangling := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "u"}}
	cases := []struct {
		name       string
		req        deletionRequest
		wantGrace  int64
		wantOrphan bool
	}{
		{"deleted through the API: its deletion grace period", deletionRequest{Spec: withGrace(30), Deleted: deletedWith(7)}, 7, false},
		{"gone without a grace period: the spec's", deletionRequest{Spec: withGrace(12), Deleted: testPod()}, 12, false},
		{"replaced by a pod of the same name: the spec's", deletionRequest{Spec: withGrace(12)}, 12, false},
		{"no grace period anywhere: 30 s", deletionRequest{Spec: testPod()}, 30, false},
		{"orphan, deleted as dangling: 1 s, as the kubelet's override", deletionRequest{Deleted: dangling}, 1, true},
		{"orphan replaced by a pod of the same name: 1 s", deletionRequest{}, 1, true},
		{"found at start-up, deleted through the API before it was claimed: the API's", deletionRequest{Deleted: deletedWith(4)}, 4, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.req.gracePeriod(); got != tc.wantGrace {
				t.Errorf("grace period %d, want %d", got, tc.wantGrace)
			}
			if got := tc.req.orphan(); got != tc.wantOrphan {
				t.Errorf("orphan %v, want %v", got, tc.wantOrphan)
			}
		})
	}
}

func TestKillingEvents(t *testing.T) {
	cases := []struct {
		name                              string
		orphan                            bool
		goneFromAPI, deletedInAPI, events bool
	}{
		{"graceful deletion", false, false, true, true},
		{"deletion with grace 0, seen before the pod was gone", false, true, true, true},
		{"force-deleted, never seen deleted in the API", false, true, false, false},
		{"graceful deletion, then gone from the API", false, true, true, true},
		{"replaced by a pod of the same name", false, false, false, true},
		{"orphan: the kubelet reports its stand-in pod's containers", true, true, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := killingEvents(tc.orphan, tc.goneFromAPI, tc.deletedInAPI); got != tc.events {
				t.Errorf("Killing events %v, want %v", got, tc.events)
			}
		})
	}
}

func TestNewDeletion(t *testing.T) {
	deleted := func(grace int64) *v1.Pod {
		now := metav1.Now()
		p := testPod()
		p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &now, &grace
		return p
	}
	cases := []struct {
		name                   string
		api                    *v1.Pod
		deleting, deletedInAPI bool
		grace                  int64
		want                   bool
	}{
		{"no deletion timestamp", testPod(), false, false, 0, false},
		{"first deletion", deleted(30), false, false, 0, true},
		{"first deletion with grace 0", deleted(0), false, false, 0, true},
		{"termination already under way for it", deleted(30), true, true, 30, false},
		{"grace period shortened", deleted(5), true, true, 30, true},
		{"force deletion after a graceful one", deleted(0), true, true, 30, true},
		{"longer grace period: the shorter stands", deleted(60), true, true, 30, false},
		{"deleted for another cause (a successor of the same name)", deleted(30), true, false, 30, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var under *podDeletion
			if tc.deleting {
				under = &podDeletion{inAPI: tc.deletedInAPI, grace: tc.grace}
			}
			if got := newDeletion(tc.api, under); got != tc.want {
				t.Errorf("newDeletion %v, want %v", got, tc.want)
			}
		})
	}
}
