package main

import (
	"runtime"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/vk-cri/vk-cri/cm"
	"github.com/vk-cri/vk-cri/provider"
)

// podCgroups is the manager of the host's kubepods, QoS and pod cgroups under --cgroup-root, what
// kubepods gets (the node's capacity: vk-cri reserves nothing for the system, as a kubelet
// without --system-reserved and --kube-reserved) and the kubelet's pod cgroup settings.
func podCgroups(o *options) (provider.PodCgroups, *cm.ResourceConfig, cm.PodOptions) {
	fs := cm.HostFS()
	podOpts := cm.DefaultPodOptions()
	podOpts.PodPidsLimit = o.PodMaxPIDs
	mgr := cm.NewManager(fs, cm.Options{Root: o.CgroupRoot, Pod: podOpts, V2: fs.V2, PageSizes: fs.PageSizesBytes()})
	capacity := v1.ResourceList{v1.ResourceCPU: *resource.NewQuantity(int64(runtime.NumCPU()), resource.DecimalSI)}
	if mem, err := cm.HostMemTotal(); err == nil {
		capacity[v1.ResourceMemory] = *resource.NewQuantity(mem, resource.BinarySI)
	}
	return mgr, cm.NodeAllocatableConfig(capacity, cm.HostMaxPIDs(), cm.HostCPUs()), podOpts
}
