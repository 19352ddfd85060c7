package main

import (
	"runtime"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/vk-cri/vk-cri/cm"
	"github.com/vk-cri/vk-cri/provider"
)

// podCgroups is the manager of the host's kubepods, QoS and pod cgroups under --cgroup-root, what
// kubepods gets and the kubelet's pod cgroup settings. With the kubelet's default
// enforce-node-allocatable=pods, kubepods carries the node's capacity less --system-reserved and
// --kube-reserved (pid included), but not the hard eviction thresholds: those are kept from the
// scheduler through allocatable only (pkg/kubelet/cm/node_container_manager_linux.go
// enforceNodeAllocatableCgroups, getNodeAllocatableInternalAbsolute).
func podCgroups(o *options, reserved provider.NodeReservation) (provider.PodCgroups, *cm.ResourceConfig, cm.PodOptions) {
	fs := cm.HostFS(cm.Driver(o.CgroupDriver))
	podOpts := cm.DefaultPodOptions()
	podOpts.PodPidsLimit = o.PodMaxPIDs
	mgr := cm.NewManager(fs, cm.Options{Root: o.CgroupRoot, Pod: podOpts, V2: fs.V2, PageSizes: fs.PageSizesBytes()})
	capacity := v1.ResourceList{v1.ResourceCPU: *resource.NewQuantity(int64(runtime.NumCPU()), resource.DecimalSI)}
	if mem, err := cm.HostMemTotal(); err == nil {
		capacity[v1.ResourceMemory] = *resource.NewQuantity(mem, resource.BinarySI)
	}
	maxPIDs := cm.HostMaxPIDs()
	if maxPIDs > 0 {
		capacity[resourcePIDs] = *resource.NewQuantity(maxPIDs, resource.DecimalSI)
	}
	// A declared capacity (--capacity, validated at start) replaces the host's, and kubepods
	// gets a CPU quota for it.
	declared, _ := o.declaredCapacity()
	for name, q := range declared {
		if name != v1.ResourceEphemeralStorage {
			capacity[name] = q
		}
	}
	allocatable := reserved.Absolute(capacity)
	pids := allocatable[resourcePIDs]
	return mgr, cm.NodeCapacityLimits(cm.NodeAllocatableConfig(allocatable, pids.Value(), cm.HostCPUs()), declared), podOpts
}
