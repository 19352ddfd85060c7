package gc

import (
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-cri/vk-cri/cri"
)

// ContainerPolicy is the kubelet's container GC policy (kubecontainer.GCPolicy).
type ContainerPolicy struct {
	// MinAge is how long a dead container is kept, whatever the limits.
	MinAge time.Duration
	// MaxPerPodContainer is how many dead instances of one container of one pod are kept;
	// negative for no limit.
	MaxPerPodContainer int
	// MaxContainers is how many dead containers the node keeps in all; negative for no limit.
	MaxContainers int
}

// DefaultContainerPolicy is the kubelet's: the deprecated flags --minimum-container-ttl-duration
// 0, --maximum-dead-containers-per-container 1 and --maximum-dead-containers -1
// (cmd/kubelet/app/options/options.go).
func DefaultContainerPolicy() ContainerPolicy {
	return ContainerPolicy{MinAge: 0, MaxPerPodContainer: 1, MaxContainers: -1}
}

// PodStates tells the collectors what may go of a pod, by UID, as the kubelet's pod workers do
// (podStateProvider in kuberuntime_gc.go).
type PodStates interface {
	// ShouldPodContentBeRemoved: the pod is gone (unknown, or deleted and terminated): all its
	// containers, sandboxes and logs may go.
	ShouldPodContentBeRemoved(uid types.UID) bool
	// ShouldPodRuntimeBeRemoved: the pod's containers no longer run and never will again
	// (terminated, deleted or not): under disk pressure its dead containers may go too.
	ShouldPodRuntimeBeRemoved(uid types.UID) bool
}

// DeadContainer is a container to remove.
type DeadContainer struct {
	ID      string
	Name    string
	PodUID  types.UID
	Created time.Time
	// Unknown containers are stopped before they are removed, as the kubelet kills them.
	Unknown bool
}

// ContainerPlan is what one container GC pass removes, in this order.
type ContainerPlan struct {
	Containers []DeadContainer
	// Sandboxes are the IDs of inactive sandboxes to stop and remove.
	Sandboxes []string
	// LogDirs are the pods whose log directory goes: pods that are gone and that this node
	// still had runtime objects of.
	LogDirs []types.UID
}

// evictUnit is the kubelet's grouping of dead containers: one container name in one pod.
type evictUnit struct {
	uid  types.UID
	name string
}

// PlanContainers computes a container GC pass from the runtime's containers and sandboxes of
// this node, as kuberuntime_gc.go's evictContainers, evictSandboxes and evictPodLogsDirectories:
//   - dead containers (not running, created at least MinAge ago) are grouped by pod and name;
//   - every dead container of a pod whose content should be removed goes (and with
//     evictNonDeletedPods, of a pod whose runtime should be removed: the eviction manager's
//     reclaim);
//   - of the others, each group keeps its MaxPerPodContainer newest;
//   - beyond MaxContainers on the node, each group keeps MaxContainers/groups (at least one),
//     then the oldest go until MaxContainers remain;
//   - a sandbox is active while it is ready or has a container this pass keeps; of a pod that
//     is gone every inactive sandbox goes, of another every inactive one but the newest.
func PlanContainers(now time.Time, policy ContainerPolicy, containers []*runtimeapi.Container, sandboxes []*runtimeapi.PodSandbox, pods PodStates, evictNonDeletedPods bool) ContainerPlan {
	var plan ContainerPlan
	removed := map[string]bool{}
	remove := func(cs []DeadContainer) {
		for _, c := range cs {
			removed[c.ID] = true
			plan.Containers = append(plan.Containers, c)
		}
	}
	gone := func(uid types.UID) bool {
		return pods.ShouldPodContentBeRemoved(uid) || (evictNonDeletedPods && pods.ShouldPodRuntimeBeRemoved(uid))
	}

	newestGCTime := now.Add(-policy.MinAge)
	units := map[evictUnit][]DeadContainer{}
	for _, c := range containers {
		if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			continue
		}
		created := time.Unix(0, c.CreatedAt)
		if newestGCTime.Before(created) {
			continue
		}
		k := evictUnit{uid: podUID(c.Labels, c.PodSandboxId, sandboxes), name: c.GetMetadata().GetName()}
		units[k] = append(units[k], DeadContainer{ID: c.Id, Name: k.name, PodUID: k.uid, Created: created,
			Unknown: c.State == runtimeapi.ContainerState_CONTAINER_UNKNOWN})
	}
	keys := sortedUnits(units)
	for _, k := range keys {
		sortNewestFirst(units[k])
	}
	for _, k := range keys {
		if gone(k.uid) {
			remove(units[k])
			delete(units, k)
		}
	}
	keys = sortedUnits(units)
	keepNewest := func(n int) {
		for _, k := range keys {
			if len(units[k]) > n {
				remove(units[k][n:])
				units[k] = units[k][:n]
			}
		}
	}
	if policy.MaxPerPodContainer >= 0 {
		keepNewest(policy.MaxPerPodContainer)
	}
	if policy.MaxContainers >= 0 && len(units) > 0 && countDead(units) > policy.MaxContainers {
		keepNewest(max(policy.MaxContainers/len(units), 1))
		if n := countDead(units); n > policy.MaxContainers {
			var all []DeadContainer
			for _, k := range keys {
				all = append(all, units[k]...)
			}
			sortNewestFirst(all)
			remove(all[policy.MaxContainers:])
		}
	}

	// Sandboxes, once the containers above are gone.
	withContainers := map[string]bool{}
	for _, c := range containers {
		if !removed[c.Id] {
			withContainers[c.PodSandboxId] = true
		}
	}
	byPod := map[types.UID][]*runtimeapi.PodSandbox{}
	for _, s := range sandboxes {
		uid := types.UID(s.GetMetadata().GetUid())
		byPod[uid] = append(byPod[uid], s)
	}
	uids := make([]types.UID, 0, len(byPod))
	for uid := range byPod {
		uids = append(uids, uid)
	}
	sort.Slice(uids, func(i, j int) bool { return uids[i] < uids[j] })
	for _, uid := range uids {
		sbs := byPod[uid]
		sort.SliceStable(sbs, func(i, j int) bool { return sbs[i].CreatedAt > sbs[j].CreatedAt })
		keep := 1
		if gone(uid) {
			keep = 0
		}
		for i, s := range sbs {
			if i < keep {
				continue
			}
			if s.State == runtimeapi.PodSandboxState_SANDBOX_READY || withContainers[s.Id] {
				continue
			}
			plan.Sandboxes = append(plan.Sandboxes, s.Id)
		}
	}

	// Log directories of the pods that are gone (content, not only runtime: a terminated pod
	// that still exists keeps its logs).
	seen := map[types.UID]bool{}
	for _, k := range keysOf(containers, sandboxes) {
		if !seen[k] && pods.ShouldPodContentBeRemoved(k) {
			plan.LogDirs = append(plan.LogDirs, k)
		}
		seen[k] = true
	}
	return plan
}

// podUID is a container's pod: its label, else its sandbox's.
func podUID(labels map[string]string, sandboxID string, sandboxes []*runtimeapi.PodSandbox) types.UID {
	if uid := labels[cri.PodUIDLabel]; uid != "" {
		return types.UID(uid)
	}
	for _, s := range sandboxes {
		if s.Id == sandboxID {
			return types.UID(s.GetMetadata().GetUid())
		}
	}
	return ""
}

// keysOf lists the pod UIDs of containers and sandboxes, sorted, once each.
func keysOf(containers []*runtimeapi.Container, sandboxes []*runtimeapi.PodSandbox) []types.UID {
	set := map[types.UID]bool{}
	for _, c := range containers {
		if uid := podUID(c.Labels, c.PodSandboxId, sandboxes); uid != "" {
			set[uid] = true
		}
	}
	for _, s := range sandboxes {
		if uid := s.GetMetadata().GetUid(); uid != "" {
			set[types.UID(uid)] = true
		}
	}
	out := make([]types.UID, 0, len(set))
	for uid := range set {
		out = append(out, uid)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func sortedUnits(units map[evictUnit][]DeadContainer) []evictUnit {
	keys := make([]evictUnit, 0, len(units))
	for k := range units {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].uid != keys[j].uid {
			return keys[i].uid < keys[j].uid
		}
		return keys[i].name < keys[j].name
	})
	return keys
}

// sortNewestFirst orders containers newest first (the kubelet's byCreated), by ID on a tie so
// that a plan never depends on map order.
func sortNewestFirst(cs []DeadContainer) {
	sort.SliceStable(cs, func(i, j int) bool {
		if !cs[i].Created.Equal(cs[j].Created) {
			return cs[i].Created.After(cs[j].Created)
		}
		return cs[i].ID < cs[j].ID
	})
}

func countDead(units map[evictUnit][]DeadContainer) int {
	n := 0
	for _, cs := range units {
		n += len(cs)
	}
	return n
}
