package cm

// ResizeSteps splits writing a pod cgroup's new settings around the update of its containers,
// in the kubelet's order (kuberuntime_manager.go doPodResizeAction): a value that grows is
// written before the containers are updated, one that shrinks after, so that the pod cgroup
// never holds less than its containers during the change, and a container update that fails
// leaves a shrinking pod cgroup as it was. A value the desired settings leave out (no memory
// limit, no CFS quota) keeps the current one, as the kubelet does (it cannot remove limits
// either). Values compare as the kubelet compares them, -1 (no quota) below any quota.
//
// The kubelet goes through memory (pod limit up, containers, pod limit down) then cpu (quota
// and shares up, containers, shares and quota down); vk-cri updates each container's memory
// and cpu in one UpdateContainerResources call, so both resources' "up" steps come before it and
// both "down" steps after. before or after is nil when it has nothing to write.
func ResizeSteps(current, desired *ResourceConfig) (before, after *ResourceConfig) {
	b, a := &ResourceConfig{}, &ResourceConfig{}
	var nb, na bool
	if desired.Memory != nil && current.Memory != nil && *desired.Memory != *current.Memory {
		mem := *desired.Memory
		if mem > *current.Memory {
			b.Memory, b.Unified, nb = &mem, desired.Unified, true
		} else {
			a.Memory, a.Unified, na = &mem, desired.Unified, true
		}
	}
	if desired.CPUQuota != nil && current.CPUQuota != nil && *desired.CPUQuota != *current.CPUQuota {
		quota := *desired.CPUQuota
		period := uint64(QuotaPeriod)
		if desired.CPUPeriod != nil {
			period = *desired.CPUPeriod
		}
		if quota > *current.CPUQuota {
			b.CPUQuota, b.CPUPeriod, nb = &quota, &period, true
		} else {
			a.CPUQuota, a.CPUPeriod, na = &quota, &period, true
		}
	}
	if desired.CPUShares != nil && current.CPUShares != nil && *desired.CPUShares != *current.CPUShares {
		shares := *desired.CPUShares
		if shares > *current.CPUShares {
			b.CPUShares, nb = &shares, true
		} else {
			a.CPUShares, na = &shares, true
		}
	}
	if nb {
		before = b
	}
	if na {
		after = a
	}
	return before, after
}
