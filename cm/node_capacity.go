package cm

import (
	v1 "k8s.io/api/core/v1"
)

// NodeCapacityLimits adds to kubepods' settings what makes a node's declared capacity
// (--capacity, smaller than the host's) binding on its pods: with a cpu capacity, a CFS quota of
// that many CPUs over the default period. The kubelet sets no quota on kubepods, as its capacity
// is the whole machine's; the memory limit already is the capacity less the reservations
// (NodeAllocatableConfig).
func NodeCapacityLimits(rc *ResourceConfig, capacity v1.ResourceList) *ResourceConfig {
	if rc == nil {
		rc = &ResourceConfig{}
	}
	if q, ok := capacity[v1.ResourceCPU]; ok && q.MilliValue() > 0 {
		period := uint64(QuotaPeriod)
		quota := MilliCPUToQuota(q.MilliValue(), int64(period))
		rc.CPUQuota, rc.CPUPeriod = &quota, &period
	}
	return rc
}
