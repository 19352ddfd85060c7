package eviction

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/ptr"
)

func TestLocalStorageOverLimit(t *testing.T) {
	limit := resource.MustParse("1Mi")
	eph := func(q string) v1.ResourceRequirements {
		return v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceEphemeralStorage: resource.MustParse(q)}}
	}
	pod := func(uid string, containers []v1.Container, vols ...v1.Volume) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: uid, Namespace: "ns", UID: types.UID(uid)},
			Spec: v1.PodSpec{Volumes: vols, Containers: containers}}
	}
	plain := []v1.Container{{Name: "c"}}
	limited := v1.Volume{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{SizeLimit: &limit}}}
	unlimited := v1.Volume{Name: "free", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}
	type use struct {
		vols           map[string]uint64
		pod            uint64
		rootfs, logs   uint64
		containerNames []string
	}
	stats := func(uid string, u use) statsapi.PodStats {
		ps := statsapi.PodStats{PodRef: statsapi.PodReference{UID: uid}, EphemeralStorage: &statsapi.FsStats{UsedBytes: ptr.To(u.pod)}}
		for name, b := range u.vols {
			ps.VolumeStats = append(ps.VolumeStats, statsapi.VolumeStats{Name: name, FsStats: statsapi.FsStats{UsedBytes: ptr.To(b)}})
		}
		for _, n := range u.containerNames {
			ps.Containers = append(ps.Containers, statsapi.ContainerStats{Name: n,
				Rootfs: &statsapi.FsStats{UsedBytes: ptr.To(u.rootfs)}, Logs: &statsapi.FsStats{UsedBytes: ptr.To(u.logs)}})
		}
		return ps
	}
	sidecar := v1.Container{Name: "sidecar", RestartPolicy: ptr.To(v1.ContainerRestartPolicyAlways), Resources: eph("1Mi")}
	withSidecar := pod("sidecar-over", plain)
	withSidecar.Spec.InitContainers = []v1.Container{sidecar}
	pods := []*v1.Pod{
		pod("emptydir-over", plain, limited),
		pod("emptydir-at", plain, limited),
		pod("free", plain, unlimited),
		pod("unmeasured", plain, limited),
		// Two containers with 10Mi each: the pod's limit is 20Mi.
		pod("pod-over", []v1.Container{{Name: "a", Resources: eph("10Mi")}, {Name: "b", Resources: eph("10Mi")}}),
		pod("container-over", []v1.Container{{Name: "a", Resources: eph("10Mi")}, {Name: "b"}}),
		pod("container-logs-only", []v1.Container{{Name: "a", Resources: eph("10Mi")}}),
		withSidecar,
	}
	summary := &statsapi.Summary{Pods: []statsapi.PodStats{
		stats("emptydir-over", use{vols: map[string]uint64{"scratch": 2 << 20}}),
		stats("emptydir-at", use{vols: map[string]uint64{"scratch": 1 << 20}}),
		stats("free", use{vols: map[string]uint64{"free": 1 << 30}}),
		stats("pod-over", use{pod: 21 << 20, rootfs: 9 << 20, containerNames: []string{"a", "b"}}),
		// The pod's limit is a's 10Mi (b has none), not exceeded as measured; a's writable layer
		// and logs exceed a's own.
		stats("container-over", use{pod: 10 << 20, rootfs: 8 << 20, logs: 3 << 20, containerNames: []string{"a"}}),
		stats("container-logs-only", use{pod: 9 << 20, rootfs: 9 << 20, logs: 2 << 20, containerNames: []string{"a"}}),
		stats("sidecar-over", use{rootfs: 2 << 20, containerNames: []string{"sidecar"}}),
	}}
	if !hasLocalStorageLimit(pods) || hasLocalStorageLimit([]*v1.Pod{pod("free", plain, unlimited)}) {
		t.Error("hasLocalStorageLimit")
	}
	for _, tc := range []struct {
		dedicatedImageFs bool
		want             map[string]string
	}{
		{want: map[string]string{
			"emptydir-over":       `Usage of EmptyDir volume "scratch" exceeds the limit "1Mi". `,
			"pod-over":            "Pod ephemeral local storage usage exceeds the total limit of containers 20Mi. ",
			"container-over":      `Container a exceeded its local ephemeral storage limit "10Mi". `,
			"container-logs-only": `Container a exceeded its local ephemeral storage limit "10Mi". `,
			"sidecar-over":        `Container sidecar exceeded its local ephemeral storage limit "1Mi". `,
		}},
		// With a separate image file system the writable layer does not count.
		{dedicatedImageFs: true, want: map[string]string{
			"emptydir-over": `Usage of EmptyDir volume "scratch" exceeds the limit "1Mi". `,
			"pod-over":      "Pod ephemeral local storage usage exceeds the total limit of containers 20Mi. ",
		}},
	} {
		got := map[string]string{}
		for _, c := range localStorageOverLimit(pods, summary, tc.dedicatedImageFs) {
			got[c.pod.Name] = c.message
			if c.grace != hardEvictionGrace {
				t.Errorf("%s: grace %d", c.pod.Name, c.grace)
			}
		}
		if len(got) != len(tc.want) {
			t.Errorf("dedicated %v: got %v, want %v", tc.dedicatedImageFs, got, tc.want)
		}
		for name, msg := range tc.want {
			if got[name] != msg {
				t.Errorf("dedicated %v: %s: message %q, want %q", tc.dedicatedImageFs, name, got[name], msg)
			}
		}
	}
}
