package stats

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	cadvisorapi "github.com/google/cadvisor/lib/model"
	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
	internalapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/vk-cri/vk-cri/cm"
)

// Config tells the collector what belongs to its node.
type Config struct {
	NodeName string
	// OwnerLabel and its value NodeName select this node's sandboxes and containers in a runtime
	// shared with other agents.
	OwnerLabel string
	CgroupRoot string
	// CgroupDriver is how the pods' cgroups are named (cgroupfs paths or systemd slices).
	CgroupDriver cm.Driver
	RootDir      string
	PodLogRoot   string
	// Pods lists the pods the node runs (for their volumes).
	Pods func() []*v1.Pod
	// CallTimeout bounds each CRI call.
	CallTimeout time.Duration
	// VolumeStatsPeriod is how long a volume's measured usage is reused (the kubelet: 1 minute).
	VolumeStatsPeriod time.Duration
}

// Collector gathers the node's measurements and assembles summaries.
type Collector struct {
	cfg     Config
	machine Machine
	cgroups cgroupReader
	runtime internalapi.RuntimeService
	images  internalapi.ImageManagerService
	log     *logrus.Entry

	host    hostProbe
	rates   *rateCache
	volumes *volumeCache
	// mu serialises collections: the CPU rates are differences between successive readings.
	mu sync.Mutex
}

// NewCollector builds a collector on a started cAdvisor and a connected runtime.
func NewCollector(cfg Config, machine Machine, runtime internalapi.RuntimeService, images internalapi.ImageManagerService, log *logrus.Entry) (*Collector, error) {
	cg, err := newCadvisorCgroups()
	if err != nil {
		return nil, err
	}
	return newCollector(cfg, machine, cg, runtime, images, log), nil
}

func newCollector(cfg Config, machine Machine, cg cgroupReader, runtime internalapi.RuntimeService, images internalapi.ImageManagerService, log *logrus.Entry) *Collector {
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = 30 * time.Second
	}
	if cfg.VolumeStatsPeriod <= 0 {
		cfg.VolumeStatsPeriod = time.Minute
	}
	if cfg.Pods == nil {
		cfg.Pods = func() []*v1.Pod { return nil }
	}
	return &Collector{
		cfg: cfg, machine: machine, cgroups: cg, runtime: runtime, images: images, log: log,
		host:    realHost(),
		rates:   newRateCache(),
		volumes: newVolumeCache(cfg.VolumeStatsPeriod),
	}
}

// Machine is the cAdvisor the collector reads.
func (c *Collector) Machine() Machine { return c.machine }

// Summary measures the node now and returns the kubelet's summary.
func (c *Collector) Summary(ctx context.Context) (*statsapi.Summary, error) {
	snap, err := c.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	return buildSummary(snap), nil
}

func (c *Collector) snapshot(ctx context.Context) (*snapshot, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.host.now()
	s := &snapshot{NodeName: c.cfg.NodeName, Now: now, BootTime: c.host.bootTime(now)}
	mi, err := c.machine.MachineInfo()
	if err != nil {
		return nil, fmt.Errorf("machine info: %w", err)
	}
	s.MachineMemory = mi.MemoryCapacity
	if s.Root, err = c.machine.RootInfo(); err != nil {
		return nil, err
	}
	rootFs, err := c.machine.DirFsInfo(c.cfg.RootDir)
	if err != nil {
		return nil, fmt.Errorf("node file system: %w", err)
	}
	rootFs.Timestamp = now
	s.RootFs = &rootFs
	s.ImageFsUsage, s.ImageFs = c.imageFs(ctx, now)
	s.Rlimit = c.host.rlimit(now)
	seen := map[string]bool{}
	podsCgroup := podsCgroupPath(c.cfg.CgroupRoot, c.cfg.CgroupDriver)
	s.PodsCgroup = c.readCgroup(podsCgroup, false, seen)

	sandboxes, containers, stats, err := c.runtimeState(ctx)
	if err != nil {
		return nil, err
	}
	specs := map[string]*v1.Pod{}
	for _, p := range c.cfg.Pods() {
		specs[string(p.UID)] = p
	}
	byPod := map[string][]*runtimeapi.Container{}
	for _, ct := range containers {
		byPod[ct.PodSandboxId] = append(byPod[ct.PodSandboxId], ct)
	}
	for _, sb := range sandboxes {
		md := sb.GetMetadata()
		ps := podSnapshot{Sandbox: sb}
		podCgroup := c.findPodCgroup(md.GetUid())
		logDir := filepath.Join(c.cfg.PodLogRoot, md.GetNamespace()+"_"+md.GetName()+"_"+md.GetUid())
		for _, ct := range byPod[sb.Id] {
			cs := containerSnapshot{Container: ct, Stats: stats[ct.Id]}
			if podCgroup != "" {
				cs.Cgroup = c.readCgroup(c.containerCgroup(podCgroup, ct.Id), false, seen)
			}
			if u, err := c.host.diskUsage(filepath.Join(logDir, ct.GetMetadata().GetName())); err == nil {
				cs.Logs = &u
			}
			ps.Containers = append(ps.Containers, cs)
		}
		// The pod is read right after its containers: its counters include theirs.
		if podCgroup != "" {
			ps.Cgroup = c.readCgroup(podCgroup, true, seen)
		}
		ps.Volumes, ps.EphemeralVolumes = c.volumes.stats(specs[md.GetUid()], c.cfg.RootDir, c.host, now)
		s.Pods = append(s.Pods, ps)
	}
	c.rates.prune(seen)
	c.volumes.prune(specs)
	return s, nil
}

// readCgroup reads a cgroup and its CPU rate since the last reading; nil when it cannot be read.
func (c *Collector) readCgroup(name string, network bool, seen map[string]bool) *cgroupSample {
	st, err := c.cgroups.Read(name, network)
	if err != nil {
		if !isNotExist(err) {
			c.log.WithError(err).WithField("cgroup", name).Debug("cannot read cgroup")
		}
		return nil
	}
	seen[name] = true
	return &cgroupSample{Name: name, Stats: st, UsageNanoCores: c.rates.update(name, st), MemoryLimit: c.cgroups.MemoryLimit(name)}
}

func (c *Collector) findPodCgroup(uid string) string {
	for _, cand := range podCgroupCandidates(c.cfg.CgroupRoot, c.cfg.CgroupDriver, uid) {
		if c.cgroups.Exists(cand) {
			return cand
		}
	}
	return ""
}

// containerCgroup is the container's cgroup in its pod's: the first candidate that exists, or
// the first (read as gone) when none does.
func (c *Collector) containerCgroup(podCgroup, id string) string {
	cands := containerCgroupCandidates(podCgroup, c.cfg.CgroupDriver, id)
	for _, cand := range cands {
		if c.cgroups.Exists(cand) {
			return cand
		}
	}
	return cands[0]
}

// runtimeState lists this node's ready sandboxes, their running containers and the runtime's
// stats of those containers, as the kubelet keeps them for the summary.
func (c *Collector) runtimeState(ctx context.Context) ([]*runtimeapi.PodSandbox, []*runtimeapi.Container, map[string]*runtimeapi.ContainerStats, error) {
	owner := map[string]string{c.cfg.OwnerLabel: c.cfg.NodeName}
	cctx, cancel := context.WithTimeout(ctx, c.cfg.CallTimeout)
	defer cancel()
	sandboxes, err := c.runtime.ListPodSandbox(cctx, &runtimeapi.PodSandboxFilter{
		State:         &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_READY},
		LabelSelector: owner,
	})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("listing sandboxes: %w", err)
	}
	containers, err := c.runtime.ListContainers(cctx, &runtimeapi.ContainerFilter{
		State:         &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING},
		LabelSelector: owner,
	})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("listing containers: %w", err)
	}
	list, err := c.runtime.ListContainerStats(cctx, &runtimeapi.ContainerStatsFilter{LabelSelector: owner})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("listing container stats: %w", err)
	}
	stats := make(map[string]*runtimeapi.ContainerStats, len(list))
	for _, st := range list {
		stats[st.GetAttributes().GetId()] = st
	}
	return sandboxes, containers, stats, nil
}

// imageFs asks the runtime for its image file system and cAdvisor for that file system's size.
func (c *Collector) imageFs(ctx context.Context, now time.Time) (*runtimeapi.FilesystemUsage, *cadvisorapi.FsInfo) {
	cctx, cancel := context.WithTimeout(ctx, c.cfg.CallTimeout)
	defer cancel()
	resp, err := c.images.ImageFsInfo(cctx)
	if err != nil || len(resp.GetImageFilesystems()) == 0 {
		c.log.WithError(err).Debug("the runtime reports no image file system")
		return nil, nil
	}
	u := resp.GetImageFilesystems()[0]
	mp := u.GetFsId().GetMountpoint()
	if mp == "" {
		return u, nil
	}
	fi, err := c.machine.DirFsInfo(mp)
	if err != nil {
		c.log.WithError(err).WithField("mountpoint", mp).Debug("cannot size the image file system")
		return u, nil
	}
	fi.Timestamp = now
	return u, &fi
}
