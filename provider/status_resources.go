package provider

import (
	"math"
	"os"

	"github.com/opencontainers/cgroups"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-cri/vk-cri/cm"
	"github.com/vk-cri/vk-cri/provider/translate"
)

// The kubelet keeps a limit it set at or below these floors as the spec says it, because the
// runtime cannot express it exactly (a CFS quota of at least 1 ms, cpu.shares of at least 2).
const (
	minMilliCPULimit  = translate.MinCFSQuota * 1000 / translate.CFSPeriod
	minMilliCPUShares = translate.MinShares
)

// containerStatusResources is a container status's resources field, as the kubelet reports it
// for a container the runtime knows: the spec's requests and limits for a container that is not
// running; for a running one, the cpu and memory values the runtime reports as applied (CRI
// ContainerStatus.Resources), each falling back to the previous status's value for the same
// running instance when the runtime reports none. Memory requests are never reported by the
// runtime and stay the spec's.
func containerStatusResources(spec *v1.Container, cur *containerState, currentID string, old *v1.ContainerStatus, applied v1.ResourceRequirements) *v1.ResourceRequirements {
	res := spec.Resources.DeepCopy()
	if cur.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return res
	}
	var oldRes v1.ResourceRequirements
	sameRunning := old != nil && old.State.Running != nil && old.ContainerID == currentID
	if sameRunning && old.Resources != nil {
		oldRes = *old.Resources
	}
	keepOld := func(name v1.ResourceName, from, to v1.ResourceList) {
		if q, ok := from[name]; ok && sameRunning {
			to[name] = q.DeepCopy()
		}
	}
	// Each list takes the runtime's cpu and memory values, or keeps the previous status's where it
	// reports none; a cpu value at or below the runtime's floor stays the spec's.
	report := func(list, oldList v1.ResourceList, cpu, memory *resource.Quantity, cpuFloor int64) {
		if list == nil {
			return
		}
		if cpu != nil {
			if cpu.MilliValue() > cpuFloor || list.Cpu().MilliValue() > cpuFloor {
				list[v1.ResourceCPU] = *cpu
			}
		} else {
			keepOld(v1.ResourceCPU, oldList, list)
		}
		if memory != nil {
			list[v1.ResourceMemory] = *memory
		} else {
			keepOld(v1.ResourceMemory, oldList, list)
		}
	}
	a := appliedContainerResources(cur.Resources, applied)
	report(res.Limits, oldRes.Limits, a.cpuLimit, a.memoryLimit, minMilliCPULimit)
	report(res.Requests, oldRes.Requests, a.cpuRequest, a.memoryRequest, minMilliCPUShares)
	return res
}

// appliedResources are a running container's cgroup settings read back as quantities.
type appliedResources struct {
	cpuRequest, cpuLimit, memoryLimit, memoryRequest *resource.Quantity
}

// appliedContainerResources reads the runtime's report of a container's cgroup settings as the
// kubelet does: shares as a cpu request, quota over period as a cpu limit, a positive memory
// limit. The kubelet completes the report from what it applied itself (its actuated resources:
// the allocation at the container's creation or its last in-place resize): everything when the
// runtime reports nothing, else the memory request (which no cgroup setting holds).
func appliedContainerResources(r *runtimeapi.LinuxContainerResources, applied v1.ResourceRequirements) appliedResources {
	var a appliedResources
	if r != nil {
		if r.CpuPeriod > 0 {
			if m := quotaToMilliCPU(r.CpuQuota, r.CpuPeriod); m > 0 {
				a.cpuLimit = resource.NewMilliQuantity(m, resource.DecimalSI)
			}
		}
		if r.CpuShares > 0 {
			if m := sharesToMilliCPU(r.CpuShares); m > 0 {
				a.cpuRequest = resource.NewMilliQuantity(m, resource.DecimalSI)
			}
		}
		if r.MemoryLimitInBytes > 0 {
			a.memoryLimit = resource.NewQuantity(r.MemoryLimitInBytes, resource.BinarySI)
		}
	}
	if a.cpuRequest == nil && a.cpuLimit == nil && a.memoryLimit == nil {
		return appliedResources{
			cpuRequest:    applied.Requests.Cpu(),
			cpuLimit:      applied.Limits.Cpu(),
			memoryRequest: applied.Requests.Memory(),
			memoryLimit:   applied.Limits.Memory(),
		}
	}
	if q := applied.Requests[v1.ResourceMemory]; !q.IsZero() {
		a.memoryRequest = &q
	}
	return a
}

// sharesToMilliCPU inverts translate.MilliCPUToShares, rounding up.
func sharesToMilliCPU(shares int64) int64 {
	if shares < translate.MinShares {
		return 0
	}
	return int64(math.Ceil(float64(shares*1000) / float64(translate.SharesPerCPU)))
}

// quotaToMilliCPU inverts translate.MilliCPUToQuota; -1 (no quota) is 0.
func quotaToMilliCPU(quota, period int64) int64 {
	if quota == -1 || period <= 0 {
		return 0
	}
	return quota * 1000 / period
}

// allocatedContainerResources is a container status's allocatedResources: the spec's requests.
func allocatedContainerResources(spec *v1.Container) v1.ResourceList {
	if len(spec.Resources.Requests) == 0 {
		return nil
	}
	return spec.Resources.Requests.DeepCopy()
}

// volumeMountStatuses lists a container's mounts as its status reports them: every volume
// mount of the spec (the service-account token's included), and for read-only ones whether the
// mount is recursively read-only: Enabled where translate.ResolveRecursiveReadOnly made it so with the
// pod's handler, Disabled otherwise (also when it was refused), as the kubelet's
// convertToAPIContainerStatuses reports it. The kubelet keeps the list of the first status it
// reported; the spec's mounts cannot change, so it is the spec's list every time.
func volumeMountStatuses(spec *v1.Container, handlerSupportsRRO bool) []v1.VolumeMountStatus {
	if len(spec.VolumeMounts) == 0 {
		return nil
	}
	out := make([]v1.VolumeMountStatus, 0, len(spec.VolumeMounts))
	for _, m := range spec.VolumeMounts {
		st := v1.VolumeMountStatus{Name: m.Name, MountPath: m.MountPath, ReadOnly: m.ReadOnly}
		if m.ReadOnly {
			mode := v1.RecursiveReadOnlyDisabled
			if rro, err := translate.ResolveRecursiveReadOnly(m, handlerSupportsRRO); err == nil && rro {
				mode = v1.RecursiveReadOnlyEnabled
			}
			st.RecursiveReadOnly = &mode
		}
		out = append(out, st)
	}
	return out
}

// podCgroupModel describes the pod cgroups the kubelet would have made on this host, whose
// settings it reads back into a running pod's status.resources.
type podCgroupModel struct {
	// V2 is true on a cgroup v2 (unified) host, where an unlimited memory cgroup reads "max"
	// (no value); on cgroup v1 it reads as the kernel's largest page-aligned limit.
	V2 bool
	// PageSize is what the kernel rounds a memory limit down to (cgroup v1).
	PageSize int64
	// Read, when set, is the pod cgroup's settings as read from the host: the status reads them
	// back instead of modelling them.
	Read *cm.ResourceConfig
}

// withReadback is the model with the pod cgroup's settings as read.
func (m podCgroupModel) withReadback(rc *cm.ResourceConfig) podCgroupModel {
	m.Read = rc
	return m
}

// hostPodCgroupModel describes this host's cgroups.
func hostPodCgroupModel() podCgroupModel {
	return podCgroupModel{V2: cgroups.IsCgroup2UnifiedMode(), PageSize: int64(os.Getpagesize())}
}

// cgroupV1Unlimited is memory.limit_in_bytes of a cgroup v1 without a limit (4 KiB pages).
const cgroupV1Unlimited = math.MaxInt64 &^ (4096 - 1)

// podResourceOptions are the kubelet v1.37's aggregation options: pod-level resources count;
// DRA node-allocatable claims (alpha) do not.
var podResourceOptions = resourcehelper.PodResourcesOptions{}

// podStatusResources is the pod status's resources and allocatedResources, as the kubelet
// v1.37 reports them (InPlacePodLevelResourcesVerticalScaling): allocatedResources is the pod's
// aggregate requests. resources is the aggregate requests and limits while the pod was not
// running at the previous status; once it was, it is what the kubelet reads back from the pod
// cgroup it configured for the resources applied to the containers (applied: the pod with each
// container's actuated resources; a resize in progress still shows the old ones there), while
// cgroupPresent (until the pod's teardown removed it), a value falling back to the previous
// status's when the cgroup does not hold it.
func podStatusResources(pod, applied *v1.Pod, old v1.PodStatus, model podCgroupModel, cgroupPresent bool) (*v1.ResourceRequirements, v1.ResourceList) {
	requests := resourcehelper.PodRequests(pod, podResourceOptions)
	allocated := nonEmpty(requests)
	res := pod.Spec.Resources.DeepCopy()
	if res == nil {
		res = &v1.ResourceRequirements{}
	}
	if old.Phase != v1.PodRunning {
		res.Requests = nonEmpty(requests.DeepCopy())
		res.Limits = nonEmpty(resourcehelper.PodLimits(pod, podResourceOptions))
		return res, allocated
	}
	if res.Requests == nil {
		res.Requests = v1.ResourceList{}
	}
	if res.Limits == nil {
		res.Limits = v1.ResourceList{}
	}
	var oldRes v1.ResourceRequirements
	if old.Resources != nil {
		oldRes = *old.Resources
	}
	keepOld := func(name v1.ResourceName, from, to v1.ResourceList) {
		if q, ok := from[name]; ok {
			to[name] = q.DeepCopy()
		}
	}
	cg := kubeletPodCgroup(applied, model)
	if !cgroupPresent {
		cg = podCgroupReadback{}
	}
	if cg.shares != nil {
		allocatedCPU := res.Requests.Cpu().MilliValue()
		read := resource.NewMilliQuantity(sharesToMilliCPU(*cg.shares), resource.DecimalSI)
		if read.MilliValue() > minMilliCPUShares || allocatedCPU > minMilliCPUShares {
			// cgroup v2 stores shares as a coarser weight: a read-back that is the allocated
			// value gone through it keeps the allocated value.
			if sharesThroughWeight(translate.MilliCPUToShares(allocatedCPU)) != *cg.shares {
				res.Requests[v1.ResourceCPU] = *read
			}
		}
	} else {
		keepOld(v1.ResourceCPU, oldRes.Requests, res.Requests)
	}
	if _, ok := res.Requests[v1.ResourceMemory]; !ok {
		if q, ok := requests[v1.ResourceMemory]; ok {
			res.Requests[v1.ResourceMemory] = q
		}
	}
	if cg.cpuLimit != nil {
		if cg.cpuLimit.MilliValue() > minMilliCPULimit || res.Limits.Cpu().MilliValue() > minMilliCPULimit {
			res.Limits[v1.ResourceCPU] = *cg.cpuLimit
		}
	} else {
		keepOld(v1.ResourceCPU, oldRes.Limits, res.Limits)
	}
	if cg.memoryLimit != nil {
		res.Limits[v1.ResourceMemory] = *cg.memoryLimit
	} else {
		keepOld(v1.ResourceMemory, oldRes.Limits, res.Limits)
	}
	res.Requests, res.Limits = nonEmpty(res.Requests), nonEmpty(res.Limits)
	return res, allocated
}

// podCgroupReadback is what reading a pod cgroup's cpu and memory settings gives.
type podCgroupReadback struct {
	shares                *int64
	cpuLimit, memoryLimit *resource.Quantity
}

// kubeletPodCgroup is what the kubelet reads back from the pod cgroup it configures for a pod:
// cpu.shares from the aggregate cpu request (the minimum for BestEffort pods); a CFS quota from
// the aggregate cpu limit, and a memory limit from the aggregate memory limit, for Guaranteed
// pods and for Burstable pods whose every container (or the pod itself) declares that limit.
// Without a memory limit, cgroup v1 reads its largest value and cgroup v2 none.
func kubeletPodCgroup(pod *v1.Pod, model podCgroupModel) podCgroupReadback {
	if model.Read != nil {
		r := cm.ReadbackOf(model.Read)
		return podCgroupReadback{shares: r.Shares, cpuLimit: r.CPULimit, memoryLimit: r.MemoryLimit}
	}
	// The values the kubelet writes are cm's (the pod cgroup vk-cri itself makes); what the
	// model adds is how the host's cgroup files give them back.
	rb := cm.ReadbackOf(cm.PodResourceConfig(pod, cm.DefaultPodOptions()))
	r := podCgroupReadback{shares: rb.Shares, cpuLimit: rb.CPULimit}
	if model.V2 && r.shares != nil {
		shares := sharesThroughWeight(*r.shares)
		r.shares = &shares
	}
	switch {
	case rb.MemoryLimit != nil:
		page := model.PageSize
		if page <= 0 {
			page = 4096
		}
		r.memoryLimit = resource.NewQuantity(rb.MemoryLimit.Value()/page*page, resource.BinarySI)
	case !model.V2:
		r.memoryLimit = resource.NewQuantity(cgroupV1Unlimited, resource.BinarySI)
	}
	return r
}

// sharesThroughWeight is cpu.shares written to cgroup v2's cpu.weight and read back, as the
// container runtimes and the kubelet convert them.
func sharesThroughWeight(shares int64) int64 {
	weight := int64(10000)
	if shares < translate.MaxShares {
		weight = 1 + ((shares-2)*9999)/(translate.MaxShares-2)
	}
	return ((weight-1)*(translate.MaxShares-2))/9999 + 2
}

func nonEmpty(l v1.ResourceList) v1.ResourceList {
	if len(l) == 0 {
		return nil
	}
	return l
}
