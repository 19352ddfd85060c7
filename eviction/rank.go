package eviction

import (
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// usageOf measures one resource of a pod from its stats; ok is false without stats.
type usageOf func(ps *statsapi.PodStats) (q resource.Quantity, ok bool)

func memoryUsage(ps *statsapi.PodStats) (resource.Quantity, bool) {
	var sum uint64
	for _, c := range ps.Containers {
		if c.Memory != nil && c.Memory.WorkingSetBytes != nil {
			sum += *c.Memory.WorkingSetBytes
		}
	}
	return *bytes(sum), true
}

func ephemeralUsage(ps *statsapi.PodStats) (resource.Quantity, bool) {
	if ps.EphemeralStorage == nil || ps.EphemeralStorage.UsedBytes == nil {
		return resource.Quantity{}, false
	}
	return *bytes(*ps.EphemeralStorage.UsedBytes), true
}

func inodeUsage(ps *statsapi.PodStats) (resource.Quantity, bool) {
	if ps.EphemeralStorage == nil || ps.EphemeralStorage.InodesUsed == nil {
		return resource.Quantity{}, false
	}
	return *resource.NewQuantity(int64(*ps.EphemeralStorage.InodesUsed), resource.DecimalSI), true
}

func processUsage(ps *statsapi.PodStats) (resource.Quantity, bool) {
	if ps.ProcessStats == nil || ps.ProcessStats.ProcessCount == nil {
		return resource.Quantity{}, false
	}
	return *resource.NewQuantity(int64(*ps.ProcessStats.ProcessCount), resource.DecimalSI), true
}

// podRequest is the pod's request of a resource (0 for inodes and pids, which have none).
func podRequest(pod *v1.Pod, name v1.ResourceName) resource.Quantity {
	reqs := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	if q, ok := reqs[name]; ok {
		return q
	}
	return resource.Quantity{}
}

func priorityOf(pod *v1.Pod) int32 {
	if pod.Spec.Priority != nil {
		return *pod.Spec.Priority
	}
	return 0
}

// rank orders pods for eviction under pressure on signal, most evictable first, the kubelet's
// way: pods using more than they requested first, then lower priority, then the larger use
// above the request (for pids: priority, then process count).
func rank(pods []*v1.Pod, stats map[string]*statsapi.PodStats, signal Signal) {
	res := resourceOf(signal)
	var use usageOf
	switch signal {
	case MemoryAvailable:
		use = memoryUsage
	case NodeFsAvailable, ImageFsAvailable:
		use = ephemeralUsage
	case NodeFsInodesFree, ImageFsInodesFree:
		use = inodeUsage
	default:
		use = processUsage
	}
	// over is how much a pod uses beyond its request; ok false when it has no stats (such pods
	// go last, as the kubelet cannot judge them either).
	over := func(p *v1.Pod) (resource.Quantity, bool, bool) {
		ps, found := stats[string(p.UID)]
		if !found {
			return resource.Quantity{}, false, false
		}
		u, ok := use(ps)
		if !ok {
			return resource.Quantity{}, false, false
		}
		req := podRequest(p, res)
		exceeds := u.Cmp(req) > 0
		u.Sub(req)
		return u, exceeds, true
	}
	sort.SliceStable(pods, func(i, j int) bool {
		oi, ei, oki := over(pods[i])
		oj, ej, okj := over(pods[j])
		if oki != okj {
			return oki
		}
		if signal != PIDAvailable && ei != ej {
			return ei
		}
		if pi, pj := priorityOf(pods[i]), priorityOf(pods[j]); pi != pj {
			return pi < pj
		}
		return oi.Cmp(oj) > 0
	})
}
