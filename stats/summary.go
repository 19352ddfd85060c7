package stats

import (
	"sort"
	"time"

	cadvisorapi "github.com/google/cadvisor/lib/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/ptr"
)

// The interface the kubelet names as a pod's default one in network stats.
const defaultInterface = "eth0"

// The name of the system container that holds all pods, as in the kubelet's summary.
const systemContainerPods = "pods"

// Memory limits above this are "no limit" (cgroup v1 reports a huge number).
const unlimitedMemory = uint64(1) << 62

// buildSummary assembles the kubelet's /stats/summary from a snapshot.
func buildSummary(s *snapshot) *statsapi.Summary {
	node := statsapi.NodeStats{
		NodeName:  s.NodeName,
		StartTime: metav1.NewTime(s.BootTime),
		Rlimit:    s.Rlimit,
	}
	if s.Root != nil {
		if latest := latestSample(s.Root); latest != nil {
			limit := s.Root.Spec.Memory.Limit
			if limit == 0 || limit > unlimitedMemory {
				limit = s.MachineMemory
			}
			root := &cgroupSample{Stats: latest, MemoryLimit: limit}
			if latest.CpuInst != nil {
				root.UsageNanoCores = ptr.To(latest.CpuInst.Usage.Total)
			}
			node.CPU, node.Memory = cpuAndMemory(root)
			node.Swap = swapStats(latest)
			node.Network = networkStats(latest)
		}
	}
	node.Fs = fsStats(s.RootFs)
	if imageFs := imageFsStats(s.ImageFsUsage, s.ImageFs); imageFs != nil {
		node.Runtime = &statsapi.RuntimeStats{ImageFs: imageFs, ContainerFs: imageFs}
	}
	if s.PodsCgroup != nil && s.PodsCgroup.Stats != nil {
		cpu, mem := cpuAndMemory(s.PodsCgroup)
		node.SystemContainers = append(node.SystemContainers, statsapi.ContainerStats{
			Name:      systemContainerPods,
			StartTime: metav1.NewTime(s.BootTime),
			CPU:       cpu,
			Memory:    mem,
			Swap:      swapStats(s.PodsCgroup.Stats),
		})
	}
	summary := &statsapi.Summary{Node: node, Pods: []statsapi.PodStats{}}
	for i := range s.Pods {
		summary.Pods = append(summary.Pods, podStats(&s.Pods[i], s.RootFs, s.ImageFs, s.Now))
	}
	sort.Slice(summary.Pods, func(i, j int) bool {
		a, b := summary.Pods[i].PodRef, summary.Pods[j].PodRef
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	return summary
}

func latestSample(ci *cadvisorapi.ContainerInfo) *cadvisorapi.ContainerStats {
	if ci == nil || len(ci.Stats) == 0 {
		return nil
	}
	return ci.Stats[len(ci.Stats)-1]
}

// cpuAndMemory converts a cgroup reading into the summary's CPU and memory stats.
func cpuAndMemory(c *cgroupSample) (*statsapi.CPUStats, *statsapi.MemoryStats) {
	st := c.Stats
	t := metav1.NewTime(st.Timestamp)
	cpu := &statsapi.CPUStats{Time: t, UsageCoreNanoSeconds: ptr.To[uint64](0), UsageNanoCores: ptr.To(ptr.Deref(c.UsageNanoCores, 0))}
	if st.Cpu != nil {
		cpu.UsageCoreNanoSeconds = ptr.To(st.Cpu.Usage.Total)
		cpu.PSI = psiStats(&st.Cpu.PSI)
	}
	if st.Memory == nil {
		return cpu, &statsapi.MemoryStats{Time: t, WorkingSetBytes: ptr.To[uint64](0)}
	}
	mem := &statsapi.MemoryStats{
		Time:            t,
		UsageBytes:      ptr.To(st.Memory.Usage),
		WorkingSetBytes: ptr.To(st.Memory.WorkingSet),
		RSSBytes:        ptr.To(st.Memory.RSS),
		PageFaults:      ptr.To(st.Memory.ContainerData.Pgfault),
		MajorPageFaults: ptr.To(st.Memory.ContainerData.Pgmajfault),
	}
	mem.PSI = psiStats(&st.Memory.PSI)
	if c.MemoryLimit > 0 && c.MemoryLimit <= unlimitedMemory {
		avail := uint64(0)
		if c.MemoryLimit > st.Memory.WorkingSet {
			avail = c.MemoryLimit - st.Memory.WorkingSet
		}
		mem.AvailableBytes = &avail
	}
	return cpu, mem
}

// psiStats is a cgroup's pressure stall information as the kubelet v1.37 reports it (KubeletPSI,
// GA and locked on: pkg/kubelet/stats/helper.go cadvisorPSIToStatsPSI): the cpu.pressure and
// memory.pressure files of cgroup v2 as cAdvisor read them, zeros where the kernel has none
// (cgroup v1), as the kubelet gives them there too.
func psiStats(p *cadvisorapi.PSIStats) *statsapi.PSIStats {
	data := func(d cadvisorapi.PSIData) statsapi.PSIData {
		return statsapi.PSIData{Total: d.Total, Avg10: d.Avg10, Avg60: d.Avg60, Avg300: d.Avg300}
	}
	return &statsapi.PSIStats{Full: data(p.Full), Some: data(p.Some)}
}

func swapStats(st *cadvisorapi.ContainerStats) *statsapi.SwapStats {
	var swap uint64
	if st.Memory != nil {
		swap = st.Memory.Swap
	}
	return &statsapi.SwapStats{Time: metav1.NewTime(st.Timestamp), SwapUsageBytes: ptr.To(swap)}
}

func networkStats(st *cadvisorapi.ContainerStats) *statsapi.NetworkStats {
	if st.Network == nil || len(st.Network.Interfaces) == 0 {
		return nil
	}
	n := &statsapi.NetworkStats{Time: metav1.NewTime(st.Timestamp)}
	for _, in := range st.Network.Interfaces {
		is := statsapi.InterfaceStats{
			Name:     in.Name,
			RxBytes:  ptr.To(in.RxBytes),
			RxErrors: ptr.To(in.RxErrors),
			TxBytes:  ptr.To(in.TxBytes),
			TxErrors: ptr.To(in.TxErrors),
		}
		if in.Name == defaultInterface {
			n.InterfaceStats = is
		}
		n.Interfaces = append(n.Interfaces, is)
	}
	return n
}

// fsStats describes a whole file system.
func fsStats(fi *cadvisorapi.FsInfo) *statsapi.FsStats {
	if fi == nil {
		return nil
	}
	fs := &statsapi.FsStats{
		Time:           metav1.NewTime(fi.Timestamp),
		AvailableBytes: ptr.To(fi.Available),
		CapacityBytes:  ptr.To(fi.Capacity),
		UsedBytes:      ptr.To(fi.Usage),
	}
	if fi.Inodes != nil && fi.InodesFree != nil {
		fs.Inodes = ptr.To(*fi.Inodes)
		fs.InodesFree = ptr.To(*fi.InodesFree)
		fs.InodesUsed = ptr.To(*fi.Inodes - *fi.InodesFree)
	}
	return fs
}

// withFsCapacity is usage on a file system: the usage given, the file system's size.
func withFsCapacity(t time.Time, used, inodesUsed *uint64, fi *cadvisorapi.FsInfo) *statsapi.FsStats {
	fs := &statsapi.FsStats{Time: metav1.NewTime(t), UsedBytes: used, InodesUsed: inodesUsed}
	if fi != nil {
		fs.AvailableBytes = ptr.To(fi.Available)
		fs.CapacityBytes = ptr.To(fi.Capacity)
		if fi.Inodes != nil && fi.InodesFree != nil {
			fs.Inodes = ptr.To(*fi.Inodes)
			fs.InodesFree = ptr.To(*fi.InodesFree)
		}
	}
	return fs
}

func imageFsStats(u *runtimeapi.FilesystemUsage, fi *cadvisorapi.FsInfo) *statsapi.FsStats {
	if u == nil {
		return nil
	}
	var inodesUsed *uint64
	if u.InodesUsed != nil {
		inodesUsed = ptr.To(u.InodesUsed.Value)
	}
	return withFsCapacity(time.Unix(0, u.Timestamp), ptr.To(u.GetUsedBytes().GetValue()), inodesUsed, fi)
}

func podStats(p *podSnapshot, rootFs, imageFs *cadvisorapi.FsInfo, now time.Time) statsapi.PodStats {
	md := p.Sandbox.GetMetadata()
	ps := statsapi.PodStats{
		PodRef:    statsapi.PodReference{Name: md.GetName(), Namespace: md.GetNamespace(), UID: md.GetUid()},
		StartTime: metav1.NewTime(time.Unix(0, p.Sandbox.CreatedAt)),
	}
	for i := range p.Containers {
		ps.Containers = append(ps.Containers, containerStats(&p.Containers[i], rootFs, imageFs, now))
	}
	sort.Slice(ps.Containers, func(i, j int) bool { return ps.Containers[i].Name < ps.Containers[j].Name })
	if p.Cgroup != nil && p.Cgroup.Stats != nil {
		ps.CPU, ps.Memory = cpuAndMemory(p.Cgroup)
		ps.Swap = swapStats(p.Cgroup.Stats)
		ps.Network = networkStats(p.Cgroup.Stats)
	} else {
		ps.CPU, ps.Memory = sumContainers(ps.Containers)
	}
	ps.ProcessStats = processStats(p.Containers)
	ps.VolumeStats = p.Volumes
	ps.EphemeralStorage = ephemeralStorage(ps.Containers, p.Volumes, p.EphemeralVolumes, rootFs, now)
	return ps
}

// sumContainers is the pod's CPU and memory when its cgroup could not be read.
func sumContainers(cs []statsapi.ContainerStats) (*statsapi.CPUStats, *statsapi.MemoryStats) {
	if len(cs) == 0 {
		return nil, nil
	}
	cpu := &statsapi.CPUStats{UsageCoreNanoSeconds: ptr.To[uint64](0), UsageNanoCores: ptr.To[uint64](0)}
	mem := &statsapi.MemoryStats{UsageBytes: ptr.To[uint64](0), WorkingSetBytes: ptr.To[uint64](0), RSSBytes: ptr.To[uint64](0),
		PageFaults: ptr.To[uint64](0), MajorPageFaults: ptr.To[uint64](0)}
	for _, c := range cs {
		if c.CPU != nil {
			cpu.Time = c.CPU.Time
			*cpu.UsageCoreNanoSeconds += ptr.Deref(c.CPU.UsageCoreNanoSeconds, 0)
			*cpu.UsageNanoCores += ptr.Deref(c.CPU.UsageNanoCores, 0)
		}
		if c.Memory != nil {
			mem.Time = c.Memory.Time
			*mem.UsageBytes += ptr.Deref(c.Memory.UsageBytes, 0)
			*mem.WorkingSetBytes += ptr.Deref(c.Memory.WorkingSetBytes, 0)
			*mem.RSSBytes += ptr.Deref(c.Memory.RSSBytes, 0)
			*mem.PageFaults += ptr.Deref(c.Memory.PageFaults, 0)
			*mem.MajorPageFaults += ptr.Deref(c.Memory.MajorPageFaults, 0)
		}
	}
	return cpu, mem
}

// containerStats takes CPU and memory from the container's cgroup, read in the same collection
// as its pod's (so that containers never add up to more than their pod), and from the runtime
// when the cgroup could not be read; file systems come from the runtime and the log directory.
func containerStats(c *containerSnapshot, rootFs, imageFs *cadvisorapi.FsInfo, now time.Time) statsapi.ContainerStats {
	cs := statsapi.ContainerStats{
		Name:      c.Container.GetMetadata().GetName(),
		StartTime: metav1.NewTime(time.Unix(0, c.Container.CreatedAt)),
	}
	var cg *cadvisorapi.ContainerStats
	if c.Cgroup != nil {
		cg = c.Cgroup.Stats
	}
	rt := c.Stats
	cs.CPU = &statsapi.CPUStats{Time: metav1.NewTime(now), UsageCoreNanoSeconds: ptr.To[uint64](0), UsageNanoCores: ptr.To[uint64](0)}
	switch {
	case cg != nil && cg.Cpu != nil:
		cs.CPU.Time = metav1.NewTime(cg.Timestamp)
		cs.CPU.UsageCoreNanoSeconds = ptr.To(cg.Cpu.Usage.Total)
		if c.Cgroup.UsageNanoCores != nil {
			cs.CPU.UsageNanoCores = ptr.To(*c.Cgroup.UsageNanoCores)
		} else if v := rt.GetCpu().GetUsageNanoCores(); v != nil {
			cs.CPU.UsageNanoCores = ptr.To(v.Value)
		}
	case rt.GetCpu() != nil:
		cs.CPU.Time = metav1.NewTime(time.Unix(0, rt.Cpu.Timestamp))
		if v := rt.Cpu.UsageCoreNanoSeconds; v != nil {
			cs.CPU.UsageCoreNanoSeconds = ptr.To(v.Value)
		}
		if v := rt.Cpu.UsageNanoCores; v != nil {
			cs.CPU.UsageNanoCores = ptr.To(v.Value)
		}
	}
	cs.Memory = &statsapi.MemoryStats{Time: metav1.NewTime(now), WorkingSetBytes: ptr.To[uint64](0), UsageBytes: ptr.To[uint64](0), RSSBytes: ptr.To[uint64](0)}
	switch m := rt.GetMemory(); {
	case cg != nil && cg.Memory != nil:
		cs.Memory.Time = metav1.NewTime(cg.Timestamp)
		cs.Memory.WorkingSetBytes = ptr.To(cg.Memory.WorkingSet)
		cs.Memory.UsageBytes = ptr.To(cg.Memory.Usage)
		cs.Memory.RSSBytes = ptr.To(cg.Memory.RSS)
		cs.Memory.PageFaults = ptr.To(cg.Memory.ContainerData.Pgfault)
		cs.Memory.MajorPageFaults = ptr.To(cg.Memory.ContainerData.Pgmajfault)
		if lim := c.Cgroup.MemoryLimit; lim > 0 && lim <= unlimitedMemory {
			cs.Memory.AvailableBytes = ptr.To(lim - min(lim, cg.Memory.WorkingSet))
		} else if m != nil {
			cs.Memory.AvailableBytes = uintValue(m.AvailableBytes)
		}
	case m != nil:
		cs.Memory.Time = metav1.NewTime(time.Unix(0, m.Timestamp))
		cs.Memory.WorkingSetBytes = uintValue(m.WorkingSetBytes)
		cs.Memory.UsageBytes = uintValue(m.UsageBytes)
		cs.Memory.RSSBytes = uintValue(m.RssBytes)
		cs.Memory.AvailableBytes = uintValue(m.AvailableBytes)
		cs.Memory.PageFaults = uintValue(m.PageFaults)
		cs.Memory.MajorPageFaults = uintValue(m.MajorPageFaults)
	}
	swapTime := now
	if cg != nil {
		swapTime = cg.Timestamp
	}
	cs.Swap = &statsapi.SwapStats{Time: metav1.NewTime(swapTime), SwapUsageBytes: ptr.To[uint64](0)}
	if cg != nil && cg.Memory != nil {
		cs.Swap.SwapUsageBytes = ptr.To(cg.Memory.Swap)
	}
	if wl := rt.GetWritableLayer(); wl != nil {
		cs.Rootfs = withFsCapacity(time.Unix(0, wl.Timestamp), uintValue(wl.UsedBytes), uintValue(wl.InodesUsed), imageFs)
	} else {
		cs.Rootfs = withFsCapacity(now, nil, nil, imageFs)
	}
	if c.Logs != nil {
		cs.Logs = withFsCapacity(now, ptr.To(c.Logs.Bytes), ptr.To(c.Logs.Inodes), rootFs)
	}
	return cs
}

func uintValue(v *runtimeapi.UInt64Value) *uint64 {
	if v == nil {
		return nil
	}
	return ptr.To(v.Value)
}

// ephemeralStorage is the pod's use of the node's file system: containers' writable layers and
// logs, and its ephemeral volumes (the kubelet's accounting with a CRI runtime).
func ephemeralStorage(cs []statsapi.ContainerStats, vols []statsapi.VolumeStats, ephemeral map[string]bool, rootFs *cadvisorapi.FsInfo, now time.Time) *statsapi.FsStats {
	if rootFs == nil {
		return nil
	}
	out := withFsCapacity(now, ptr.To[uint64](0), ptr.To[uint64](0), rootFs)
	for _, c := range cs {
		if c.Rootfs != nil {
			*out.UsedBytes += ptr.Deref(c.Rootfs.UsedBytes, 0)
			*out.InodesUsed += ptr.Deref(c.Rootfs.InodesUsed, 0)
		}
		if c.Logs != nil {
			*out.UsedBytes += ptr.Deref(c.Logs.UsedBytes, 0)
			*out.InodesUsed += ptr.Deref(c.Logs.InodesUsed, 0)
		}
	}
	for _, v := range vols {
		if !ephemeral[v.Name] {
			continue
		}
		*out.UsedBytes += ptr.Deref(v.UsedBytes, 0)
		*out.InodesUsed += ptr.Deref(v.InodesUsed, 0)
	}
	return out
}

// processStats counts the processes of the pod's containers, as the kubelet does.
func processStats(cs []containerSnapshot) *statsapi.ProcessStats {
	var n uint64
	found := false
	for _, c := range cs {
		if c.Cgroup != nil && c.Cgroup.Stats != nil && c.Cgroup.Stats.Processes != nil {
			n += c.Cgroup.Stats.Processes.ProcessCount
			found = true
		}
	}
	if !found {
		return nil
	}
	return &statsapi.ProcessStats{ProcessCount: ptr.To(n)}
}
