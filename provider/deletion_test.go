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
		grace                             int64
		goneFromAPI, deletedInAPI, events bool
	}{
		{"graceful deletion", false, 30, false, true, true},
		{"deletion with grace 0", false, 0, false, true, false},
		{"force-deleted before the termination began", false, 30, true, false, false},
		{"graceful deletion, then gone from the API", false, 30, true, true, true},
		{"orphan: the kubelet reports its stand-in pod's containers", true, 1, true, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := killingEvents(tc.orphan, tc.grace, tc.goneFromAPI, tc.deletedInAPI); got != tc.events {
				t.Errorf("Killing events %v, want %v", got, tc.events)
			}
		})
	}
}
