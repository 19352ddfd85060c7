package translate

import (
	v1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/kubectl/pkg/util/qos"

	"github.com/vk-cri/vk-cri/provider/podspec"
)

// CPU and OOM constants of the kubelet's cgroup translation.
const (
	MinShares      = 2
	MaxShares      = 262144
	SharesPerCPU   = 1024
	CFSPeriod      = 100000 // µs
	MinCFSQuota    = 1000   // µs
	guaranteedOOM  = -997
	bestEffortOOM  = 1000
	burstableFloor = 1000 + guaranteedOOM

	// The built-in priority class of node-critical pods and the lowest system-critical priority.
	systemNodeCritical     = "system-node-critical"
	systemCriticalPriority = 2000000000
)

// PodQOS is the pod's QoS class: the one the API server recorded, else computed from the spec.
func PodQOS(pod *v1.Pod) v1.PodQOSClass {
	return qos.GetPodQOS(pod)
}

// ContainerResources translates a container's requests and limits into CRI's cgroup settings:
// cpu shares from the request (the limit when there is no request), CFS quota over a 100 ms
// period from the limit, the memory limit, and the OOM score adjustment of the pod's QoS class.
// Without a container limit, a pod-level limit applies.
func ContainerResources(node NodeFacts, pod *v1.Pod, c *v1.Container) *runtimeapi.LinuxContainerResources {
	podLevel := resourcehelper.IsPodLevelResourcesSet(pod)
	cpuLimit := c.Resources.Limits.Cpu()
	memLimit := c.Resources.Limits.Memory()
	if podLevel {
		if cpuLimit.IsZero() {
			cpuLimit = pod.Spec.Resources.Limits.Cpu()
		}
		if memLimit.IsZero() {
			memLimit = pod.Spec.Resources.Limits.Memory()
		}
	}
	cpuRequest := cpuLimit
	if q, ok := c.Resources.Requests[v1.ResourceCPU]; ok {
		cpuRequest = &q
	}
	r := &runtimeapi.LinuxContainerResources{
		CpuShares:   MilliCPUToShares(cpuRequest.MilliValue()),
		CpuPeriod:   CFSPeriod,
		CpuQuota:    MilliCPUToQuota(cpuLimit.MilliValue()),
		OomScoreAdj: oomScoreAdj(pod, c, node.MemoryCapacity),
	}
	if v := memLimit.Value(); v != 0 {
		r.MemoryLimitInBytes = v
	}
	return r
}

// MilliCPUToShares is the cpu.shares of a CPU request in millicores, as the kubelet computes
// them (pkg/kubelet/cm/helpers_linux.go MilliCPUToShares): at least MinShares, at most MaxShares.
func MilliCPUToShares(milli int64) int64 {
	if milli == 0 {
		return MinShares
	}
	return min(max(milli*SharesPerCPU/1000, MinShares), MaxShares)
}

// MilliCPUToQuota is the CFS quota of a CPU limit in millicores over a CFSPeriod, at least
// MinCFSQuota; no limit is 0 (pkg/kubelet/cm/helpers_linux.go MilliCPUToQuota).
func MilliCPUToQuota(milli int64) int64 {
	if milli == 0 {
		return 0
	}
	return max(milli*CFSPeriod/1000, MinCFSQuota)
}

// oomScoreAdj is the kubelet's heuristic: Guaranteed and node-critical pods -997, BestEffort
// 1000, Burstable 1000 minus the container's share of node memory in per mille (a sidecar no
// higher than the pod's smallest regular container), kept within 3..999.
func oomScoreAdj(pod *v1.Pod, c *v1.Container, memoryCapacity int64) int64 {
	if isNodeCritical(pod) {
		return guaranteedOOM
	}
	switch PodQOS(pod) {
	case v1.PodQOSGuaranteed:
		return guaranteedOOM
	case v1.PodQOSBestEffort:
		return bestEffortOOM
	}
	if memoryCapacity <= 0 {
		return bestEffortOOM - 1
	}
	extra := int64(0)
	if resourcehelper.IsPodLevelRequestsSet(pod) {
		extra = unclaimedPodMemoryPerContainer(pod)
	}
	adj := 1000 - 1000*(c.Resources.Requests.Memory().Value()+extra)/memoryCapacity
	if isInitSidecar(pod, c) {
		smallest := int64(-1)
		for i := range pod.Spec.Containers {
			if m := pod.Spec.Containers[i].Resources.Requests.Memory().Value(); smallest < 0 || m < smallest {
				smallest = m
			}
		}
		if smallest >= 0 {
			adj = min(adj, 1000-1000*(smallest+extra)/memoryCapacity)
		}
	}
	switch {
	case adj < burstableFloor:
		return burstableFloor
	case adj == bestEffortOOM:
		return bestEffortOOM - 1
	}
	return adj
}

// unclaimedPodMemoryPerContainer shares the part of the pod-level memory request that the
// containers do not request themselves equally among all of them (init containers included).
func unclaimedPodMemoryPerContainer(pod *v1.Pod) int64 {
	podReq := pod.Spec.Resources.Requests.Memory().Value()
	if podReq == 0 {
		return 0
	}
	claimed := resourcehelper.AggregateContainerRequests(pod, resourcehelper.PodResourcesOptions{})
	n := int64(len(pod.Spec.Containers) + len(pod.Spec.InitContainers))
	return max(podReq-claimed.Memory().Value(), 0) / n
}

// isInitSidecar reports whether c is one of the pod's restartable init containers.
func isInitSidecar(pod *v1.Pod, c *v1.Container) bool {
	return podspec.IsSidecar(c) && podspec.IsInitContainer(pod, c.Name)
}

// isNodeCritical: a pod of the system-node-critical class with a system-critical priority
// (vk-cri runs no static or mirror pods, which would count as critical whatever their priority).
func isNodeCritical(pod *v1.Pod) bool {
	return pod.Spec.PriorityClassName == systemNodeCritical &&
		pod.Spec.Priority != nil && *pod.Spec.Priority >= systemCriticalPriority
}
