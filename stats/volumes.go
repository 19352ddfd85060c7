package stats

import (
	"path/filepath"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/ptr"
)

// volumePlugin is the directory the kubelet gives a local volume type under
// <root-dir>/pods/<uid>/volumes/, and whether it counts in the pod's ephemeral storage.
func volumePlugin(v *v1.Volume) (dir string, ephemeral bool, ok bool) {
	switch {
	case v.EmptyDir != nil:
		return "kubernetes.io~empty-dir", true, true
	case v.ConfigMap != nil:
		return "kubernetes.io~configmap", true, true
	case v.Secret != nil:
		return "kubernetes.io~secret", true, true
	case v.DownwardAPI != nil:
		return "kubernetes.io~downward-api", true, true
	case v.Projected != nil:
		return "kubernetes.io~projected", true, true
	}
	return "", false, false
}

// volumeDir is where the kubelet layout keeps a pod's volume.
func volumeDir(rootDir string, uid, pluginDir, name string) string {
	return filepath.Join(rootDir, "pods", uid, "volumes", pluginDir, name)
}

type volumeEntry struct {
	measured time.Time
	stats    statsapi.VolumeStats
}

// volumeCache measures volumes at most once per period, as the kubelet's volume stats
// calculator does: walking a large volume at every scrape would cost too much.
type volumeCache struct {
	period time.Duration
	mu     sync.Mutex
	byPod  map[string]map[string]volumeEntry
}

func newVolumeCache(period time.Duration) *volumeCache {
	return &volumeCache{period: period, byPod: map[string]map[string]volumeEntry{}}
}

// stats returns the pod's local volumes' usage and which of them are ephemeral.
func (vc *volumeCache) stats(pod *v1.Pod, rootDir string, host hostProbe, now time.Time) ([]statsapi.VolumeStats, map[string]bool) {
	if pod == nil {
		return nil, nil
	}
	uid := string(pod.UID)
	vc.mu.Lock()
	defer vc.mu.Unlock()
	cached := vc.byPod[uid]
	if cached == nil {
		cached = map[string]volumeEntry{}
		vc.byPod[uid] = cached
	}
	var out []statsapi.VolumeStats
	ephemeral := map[string]bool{}
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		plugin, eph, ok := volumePlugin(v)
		if !ok {
			continue
		}
		if e, fresh := cached[v.Name]; fresh && now.Sub(e.measured) < vc.period {
			out = append(out, e.stats)
			ephemeral[v.Name] = eph
			continue
		}
		dir := volumeDir(rootDir, uid, plugin, v.Name)
		vs, err := measureVolume(host, v.Name, dir, now)
		if err != nil {
			continue
		}
		cached[v.Name] = volumeEntry{measured: now, stats: vs}
		out = append(out, vs)
		ephemeral[v.Name] = eph
	}
	return out, ephemeral
}

// prune forgets pods no longer on the node.
func (vc *volumeCache) prune(pods map[string]*v1.Pod) {
	vc.mu.Lock()
	defer vc.mu.Unlock()
	for uid := range vc.byPod {
		if _, ok := pods[uid]; !ok {
			delete(vc.byPod, uid)
		}
	}
}

// measureVolume is a volume's usage, with the size of the file system it lives on (a memory
// emptyDir is its own tmpfs).
func measureVolume(host hostProbe, name, dir string, now time.Time) (statsapi.VolumeStats, error) {
	u, err := host.diskUsage(dir)
	if err != nil {
		return statsapi.VolumeStats{}, err
	}
	fs := statsapi.FsStats{Time: metav1.NewTime(now), UsedBytes: ptr.To(u.Bytes), InodesUsed: ptr.To(u.Inodes)}
	if size, err := host.fsSize(dir); err == nil {
		fs.CapacityBytes = ptr.To(size.Capacity)
		fs.AvailableBytes = ptr.To(size.Available)
		fs.Inodes = ptr.To(size.Inodes)
		fs.InodesFree = ptr.To(size.InodesFree)
	}
	return statsapi.VolumeStats{Name: name, FsStats: fs}, nil
}
