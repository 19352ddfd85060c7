package stats

import (
	"time"

	cadvisorapi "github.com/google/cadvisor/lib/model"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// snapshot is everything one summary is made of, gathered at one moment. buildSummary turns it
// into the kubelet's format without doing any I/O, so that it can be tested on fixed data.
type snapshot struct {
	NodeName string
	// BootTime is the node's start time in the summary, as with the kubelet.
	BootTime time.Time
	Now      time.Time
	// Root is the root cgroup from cAdvisor (two samples: a CPU rate needs them).
	Root *cadvisorapi.ContainerInfo
	// MachineMemory is the machine's memory: the root cgroup has no limit of its own.
	MachineMemory uint64
	// RootFs is the file system of vk-cri's root directory (the kubelet's nodefs).
	RootFs *cadvisorapi.FsInfo
	// ImageFs is what the runtime reports for its image file system, with that file system's
	// size from cAdvisor (ImageFsInfo is nil when the runtime did not answer).
	ImageFsUsage *runtimeapi.FilesystemUsage
	ImageFs      *cadvisorapi.FsInfo
	Rlimit       *statsapi.RlimitStats
	// PodsCgroup is the cgroup all of this node's pods live in (<cgroup-root>/kubepods).
	PodsCgroup *cgroupSample
	Pods       []podSnapshot
}

// cgroupSample is one reading of a cgroup, with the CPU rate since the previous reading when
// there was one.
type cgroupSample struct {
	// Name is the cgroup's path, cAdvisor's name for it.
	Name  string
	Stats *cadvisorapi.ContainerStats
	// UsageNanoCores is nil on the first reading.
	UsageNanoCores *uint64
	// MemoryLimit is the cgroup's limit, 0 when unlimited.
	MemoryLimit uint64
}

type podSnapshot struct {
	Sandbox    *runtimeapi.PodSandbox
	Cgroup     *cgroupSample // nil when the pod's cgroup could not be read
	Containers []containerSnapshot
	Volumes    []statsapi.VolumeStats
	// EphemeralVolumes names the volumes that count in the pod's ephemeral storage.
	EphemeralVolumes map[string]bool
}

type containerSnapshot struct {
	Container *runtimeapi.Container
	Stats     *runtimeapi.ContainerStats // nil when the runtime reported none
	// Cgroup completes what the runtime leaves out (containerd 1.6: the CPU rate, page faults).
	Cgroup *cgroupSample
	Logs   *usage
}
