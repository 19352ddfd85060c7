package eviction

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

func TestEmptyDirOverLimit(t *testing.T) {
	limit := resource.MustParse("1Mi")
	pod := func(uid string, vols ...v1.Volume) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: uid, Namespace: "ns", UID: types.UID(uid)}, Spec: v1.PodSpec{Volumes: vols}}
	}
	limited := v1.Volume{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{SizeLimit: &limit}}}
	unlimited := v1.Volume{Name: "free", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}
	used := func(uid string, vols map[string]uint64) statsapi.PodStats {
		ps := statsapi.PodStats{PodRef: statsapi.PodReference{UID: uid}}
		for name, u := range vols {
			u := u
			ps.VolumeStats = append(ps.VolumeStats, statsapi.VolumeStats{Name: name, FsStats: statsapi.FsStats{UsedBytes: &u}})
		}
		return ps
	}
	pods := []*v1.Pod{pod("over", limited), pod("at", limited), pod("free", unlimited), pod("unmeasured", limited)}
	summary := &statsapi.Summary{Pods: []statsapi.PodStats{
		used("over", map[string]uint64{"scratch": 2 << 20}),
		used("at", map[string]uint64{"scratch": 1 << 20}),
		used("free", map[string]uint64{"free": 1 << 30}),
	}}
	if !hasEmptyDirLimit(pods) || hasEmptyDirLimit([]*v1.Pod{pod("free", unlimited)}) {
		t.Error("hasEmptyDirLimit")
	}
	got := emptyDirOverLimit(pods, summary)
	if len(got) != 1 || got[0].pod.Name != "over" {
		t.Fatalf("over the limit: %+v", got)
	}
	if want := `Usage of EmptyDir volume "scratch" exceeds the limit "1Mi". `; got[0].message != want {
		t.Errorf("message %q, want %q", got[0].message, want)
	}
}
