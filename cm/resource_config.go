package cm

import (
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	v1helper "k8s.io/component-helpers/resource"
	"k8s.io/kubectl/pkg/util/qos"
)

// The kernel's and the kubelet's CPU constants (helpers_linux.go).
const (
	MinShares     = 2
	MaxShares     = 262144
	SharesPerCPU  = 1024
	QuotaPeriod   = 100000 // µs, the kubelet's default cpuCFSQuotaPeriod
	MinQuotaValue = 1000   // µs

	// hugePagesUnbounded is the QoS cgroups' hugetlb limit, "unbounded" as the kubelet writes it.
	hugePagesUnbounded = int64(1 << 62)
)

// cgroup v2 files the kubelet writes through the unified map.
const (
	memoryMin = "memory.min"
	memoryLow = "memory.low"
)

// ResourceConfig is what one cgroup is set to; nil fields are left as they are. It mirrors the
// kubelet's cm.ResourceConfig.
type ResourceConfig struct {
	// Memory is the memory limit in bytes.
	Memory *int64
	// CPUShares is cpu.shares (cgroup v2: converted to cpu.weight when written).
	CPUShares *uint64
	// CPUQuota is the CFS quota in µs per CPUPeriod; -1 is none.
	CPUQuota  *int64
	CPUPeriod *uint64
	// PidsLimit is pids.max; -1 (or 0, never written) is none.
	PidsLimit *int64
	// HugePageLimit maps a huge page size in bytes to its limit in bytes.
	HugePageLimit map[int64]int64
	// CPUSet is cpuset.cpus; empty is left as it is.
	CPUSet string
	// Unified are cgroup v2 files written as they are (memory.min, memory.low ...); ignored on v1.
	Unified map[string]string
}

// PodOptions are the kubelet's settings that the pod cgroup's values depend on.
type PodOptions struct {
	// EnforceCPULimits is --cpu-cfs-quota (default true); false writes a quota of -1.
	EnforceCPULimits bool
	// CPUPeriod is cpuCFSQuotaPeriod in µs (default 100000).
	CPUPeriod uint64
	// PodPidsLimit is --pod-max-pids; <= 0 sets none (the kubelet's default -1).
	PodPidsLimit int64
}

// DefaultPodOptions are the kubelet v1.37's defaults.
func DefaultPodOptions() PodOptions {
	return PodOptions{EnforceCPULimits: true, CPUPeriod: QuotaPeriod, PodPidsLimit: -1}
}

// MilliCPUToShares converts a cpu request to cpu.shares, within the kernel's bounds; no request
// is the minimum (helpers_linux.go MilliCPUToShares).
func MilliCPUToShares(milliCPU int64) uint64 {
	if milliCPU == 0 {
		return MinShares
	}
	shares := milliCPU * SharesPerCPU / 1000
	return uint64(min(max(shares, MinShares), MaxShares))
}

// MilliCPUToQuota converts a cpu limit to a CFS quota over period, at least 1 ms; no limit is 0.
func MilliCPUToQuota(milliCPU int64, period int64) int64 {
	if milliCPU == 0 {
		return 0
	}
	return max(milliCPU*period/1000, MinQuotaValue)
}

// SharesToWeight is cgroup v2's cpu.weight for cpu.shares, as the kubelet converts it
// (cgroup_manager_linux.go getCPUWeight) and runc does for containers.
func SharesToWeight(shares uint64) uint64 {
	if shares >= MaxShares {
		return 10000
	}
	return 1 + ((shares-2)*9999)/(MaxShares-2)
}

// WeightToShares inverts SharesToWeight as the kubelet reads cpu.weight back
// (cgroup_v2_manager_linux.go cpuWeightToCPUShares).
func WeightToShares(weight uint64) uint64 {
	return ((weight-1)*(MaxShares-2))/9999 + 2
}

// PodResourceConfig is the pod cgroup's settings for a pod at its allocated resources, as the
// kubelet v1.37's ResourceConfigForPod computes them with its default feature gates
// (PodLevelResources on, MemoryQoS on but with memoryReservationPolicy None and no
// memoryThrottlingFactor, so nothing is added to the unified map) plus the pod pids limit
// (pod_container_manager_linux.go EnsureExists):
//   - requests and limits are the pod's aggregates (component-helpers PodRequests/PodLimits:
//     pod-level resources when set, else the larger of the sum of regular containers and
//     sidecars and the largest init container);
//   - Guaranteed: shares from the cpu request, the CFS quota from the cpu limit, the memory limit;
//   - Burstable: shares; the quota only if every container (or the pod itself) has a cpu limit,
//     the memory limit only if every container (or the pod itself) has a memory limit;
//   - BestEffort: the minimum shares and nothing else;
//   - huge pages from the aggregate requests, for every QoS class.
func PodResourceConfig(pod *v1.Pod, o PodOptions) *ResourceConfig {
	opts := v1helper.PodResourcesOptions{}
	reqs := v1helper.PodRequests(pod, opts)
	limits := v1helper.PodLimits(pod, opts)
	cpuDeclared, memDeclared := true, true
	for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			if list[i].Resources.Limits.Cpu().IsZero() {
				cpuDeclared = false
			}
			if list[i].Resources.Limits.Memory().IsZero() {
				memDeclared = false
			}
		}
	}
	if v1helper.IsPodLevelResourcesSet(pod) {
		if !pod.Spec.Resources.Limits.Cpu().IsZero() {
			cpuDeclared = true
		}
		if !pod.Spec.Resources.Limits.Memory().IsZero() {
			memDeclared = true
		}
	}
	period := o.CPUPeriod
	if period == 0 {
		period = QuotaPeriod
	}
	shares := MilliCPUToShares(milli(reqs, v1.ResourceCPU))
	quota := MilliCPUToQuota(milli(limits, v1.ResourceCPU), int64(period))
	if !o.EnforceCPULimits {
		quota = -1
	}
	memory := value(limits, v1.ResourceMemory)

	rc := &ResourceConfig{}
	switch qos.GetPodQOS(pod) {
	case v1.PodQOSGuaranteed:
		rc.CPUShares, rc.CPUQuota, rc.CPUPeriod, rc.Memory = &shares, &quota, &period, &memory
	case v1.PodQOSBurstable:
		rc.CPUShares = &shares
		if cpuDeclared {
			rc.CPUQuota, rc.CPUPeriod = &quota, &period
		}
		if memDeclared {
			rc.Memory = &memory
		}
	default:
		minimum := uint64(MinShares)
		rc.CPUShares = &minimum
	}
	rc.HugePageLimit = hugePageLimits(reqs)
	if o.PodPidsLimit > 0 {
		pids := o.PodPidsLimit
		rc.PidsLimit = &pids
	}
	return rc
}

// QOSResourceConfigs are the QoS cgroups' settings as the kubelet's UpdateCgroups sets them
// (qos_container_manager_linux.go) for the node's active pods: BestEffort always the minimum
// shares, Burstable the shares of the sum of the Burstable pods' cpu requests, huge pages
// unbounded in every class (pageSizes: the host's huge page sizes in bytes). kubepods itself
// (the Guaranteed "class") gets only the huge pages. With the kubelet's defaults (QOSReserved off,
// memoryReservationPolicy None) no memory limit or protection is set here.
func QOSResourceConfigs(active []*v1.Pod, pageSizes []int64) map[v1.PodQOSClass]*ResourceConfig {
	var burstableMilli int64
	for _, pod := range active {
		if qos.GetPodQOS(pod) != v1.PodQOSBurstable {
			continue
		}
		burstableMilli += milli(v1helper.PodRequests(pod, v1helper.PodResourcesOptions{}), v1.ResourceCPU)
	}
	bestEffort, burstable := uint64(MinShares), MilliCPUToShares(burstableMilli)
	out := map[v1.PodQOSClass]*ResourceConfig{
		v1.PodQOSGuaranteed: {},
		v1.PodQOSBurstable:  {CPUShares: &burstable},
		v1.PodQOSBestEffort: {CPUShares: &bestEffort},
	}
	for _, rc := range out {
		rc.HugePageLimit = unboundedHugePages(pageSizes)
	}
	return out
}

// QOSCreateConfigs are the QoS cgroups' settings when the kubelet's QoS manager starts (Start):
// BestEffort the minimum shares, Burstable none yet (the first UpdateCgroups sets them), huge
// pages unbounded; on cgroup v2 the Burstable cgroup's memory.low reset to 0 (MemoryQoS on with
// the None reservation policy). RootUnified is what kubepods gets then on v2 (memory.min and
// memory.low reset).
func QOSCreateConfigs(pageSizes []int64, v2 bool) (configs map[v1.PodQOSClass]*ResourceConfig, rootUnified map[string]string) {
	bestEffort := uint64(MinShares)
	configs = map[v1.PodQOSClass]*ResourceConfig{
		v1.PodQOSBurstable:  {HugePageLimit: unboundedHugePages(pageSizes)},
		v1.PodQOSBestEffort: {CPUShares: &bestEffort, HugePageLimit: unboundedHugePages(pageSizes)},
	}
	if v2 {
		configs[v1.PodQOSBurstable].Unified = map[string]string{memoryLow: "0"}
		rootUnified = map[string]string{memoryMin: "0", memoryLow: "0"}
	}
	return configs, rootUnified
}

// NodeAllocatableConfig is kubepods' settings with enforceNodeAllocatable=[pods], the kubelet's
// default (node_container_manager_linux.go getCgroupConfigInternal): the node's capacity less
// system-reserved and kube-reserved (not the eviction threshold) as the memory limit, its cpu as
// shares, the pid limit (min of kernel.pid_max and kernel.threads-max), huge pages, and with the
// none CPU manager policy all CPUs as the cpuset.
func NodeAllocatableConfig(allocatable v1.ResourceList, maxPIDs int64, cpus string) *ResourceConfig {
	rc := &ResourceConfig{CPUSet: cpus}
	if q, ok := allocatable[v1.ResourceMemory]; ok {
		m := q.Value()
		rc.Memory = &m
	}
	if q, ok := allocatable[v1.ResourceCPU]; ok {
		s := MilliCPUToShares(q.MilliValue())
		rc.CPUShares = &s
	}
	if maxPIDs > 0 {
		rc.PidsLimit = &maxPIDs
	}
	rc.HugePageLimit = hugePageLimits(allocatable)
	return rc
}

// Readback is what the kubelet reads back from a pod cgroup into the pod's status.resources
// (helpers_linux.go CPURequestsFromConfig, CPULimitsFromConfig, MemoryLimitsFromConfig): nil
// where the cgroup holds no such value.
type Readback struct {
	Shares      *int64
	CPULimit    *resource.Quantity
	MemoryLimit *resource.Quantity
}

// ReadbackOf converts a cgroup's read settings as the kubelet does: shares as read (the cpu
// request is derived from them), quota over period as a cpu limit when positive, a positive
// memory limit (cgroup v2's "max" reads as none).
func ReadbackOf(rc *ResourceConfig) Readback {
	var r Readback
	if rc == nil {
		return r
	}
	if rc.CPUShares != nil && *rc.CPUShares > 0 {
		s := int64(*rc.CPUShares)
		r.Shares = &s
	}
	if rc.CPUPeriod != nil && *rc.CPUPeriod > 0 && rc.CPUQuota != nil && *rc.CPUQuota != -1 {
		if m := *rc.CPUQuota * 1000 / int64(*rc.CPUPeriod); m > 0 {
			r.CPULimit = resource.NewMilliQuantity(m, resource.DecimalSI)
		}
	}
	if rc.Memory != nil && *rc.Memory > 0 {
		r.MemoryLimit = resource.NewQuantity(*rc.Memory, resource.BinarySI)
	}
	return r
}

func milli(l v1.ResourceList, name v1.ResourceName) int64 {
	if q, ok := l[name]; ok {
		return q.MilliValue()
	}
	return 0
}

func value(l v1.ResourceList, name v1.ResourceName) int64 {
	if q, ok := l[name]; ok {
		return q.Value()
	}
	return 0
}

// hugePageLimits maps each huge page size among the resources to the sum of its amounts.
func hugePageLimits(l v1.ResourceList) map[int64]int64 {
	out := map[int64]int64{}
	for name, q := range l {
		size, ok := hugePageSize(name)
		if !ok {
			continue
		}
		out[size] += q.Value()
	}
	return out
}

func unboundedHugePages(pageSizes []int64) map[int64]int64 {
	out := make(map[int64]int64, len(pageSizes))
	for _, s := range pageSizes {
		out[s] = hugePagesUnbounded
	}
	return out
}

// hugePageSize is the page size of a hugepages-<size> resource.
func hugePageSize(name v1.ResourceName) (int64, bool) {
	s, ok := strings.CutPrefix(string(name), v1.ResourceHugePagesPrefix)
	if !ok {
		return 0, false
	}
	q, err := resource.ParseQuantity(s)
	if err != nil || q.Value() <= 0 {
		return 0, false
	}
	return q.Value(), true
}
