package stats

import (
	"fmt"
	"time"

	"github.com/google/cadvisor/lib/cache/memory"
	"github.com/google/cadvisor/lib/container"
	// File system plugins: ext4/xfs (vfs), overlay (the image fs) and tmpfs (memory volumes).
	_ "github.com/google/cadvisor/lib/fs/overlay/install"
	_ "github.com/google/cadvisor/lib/fs/tmpfs/install"
	_ "github.com/google/cadvisor/lib/fs/vfs/install"
	"github.com/google/cadvisor/lib/manager"
	cadvisorapi "github.com/google/cadvisor/lib/model"
	"github.com/google/cadvisor/lib/utils/sysfs"
)

// includedMetrics are the cAdvisor metric groups vk-cri reads: what the summary and the
// eviction signals need (cpu, memory, file systems, network, process counts).
var includedMetrics = container.MetricSet{
	container.CpuUsageMetrics:     struct{}{},
	container.MemoryUsageMetrics:  struct{}{},
	container.DiskUsageMetrics:    struct{}{},
	container.NetworkUsageMetrics: struct{}{},
	container.ProcessMetrics:      struct{}{},
}

// Machine is what vk-cri asks cAdvisor about the machine: its description, the root cgroup's
// recent samples and file system usage.
type Machine interface {
	MachineInfo() (*cadvisorapi.MachineInfo, error)
	// RootInfo returns the root cgroup with its last two samples (two give a CPU rate).
	RootInfo() (*cadvisorapi.ContainerInfo, error)
	// DirFsInfo describes the file system holding dir.
	DirFsInfo(dir string) (cadvisorapi.FsInfo, error)
	VersionInfo() (*cadvisorapi.VersionInfo, error)
}

// CadvisorOptions tune the embedded cAdvisor.
type CadvisorOptions struct {
	// HousekeepingInterval is how often the root cgroup is sampled (the kubelet's 10 s).
	HousekeepingInterval time.Duration
}

type cadvisorMachine struct {
	m manager.Manager
}

// StartCadvisor starts cAdvisor's manager on the root cgroup only (see the package comment).
func StartCadvisor(opts CadvisorOptions) (Machine, error) {
	if opts.HousekeepingInterval <= 0 {
		opts.HousekeepingInterval = 10 * time.Second
	}
	// Samples are kept for two minutes: enough for a rate, bounded memory.
	cache := memory.New(2*time.Minute, nil)
	allowDynamic := true
	interval := opts.HousekeepingInterval
	// The per-container housekeeping period is a cAdvisor flag; the kubelet sets it the same way.
	*manager.HousekeepingInterval = interval
	m, err := manager.New(cache, sysfs.NewRealSysFs(), manager.HousekeepingConfig{
		Interval:                  &interval,
		AllowDynamic:              &allowDynamic,
		DisableContainerDiscovery: true,
	}, includedMetrics, nil, nil, "", 0)
	if err != nil {
		return nil, fmt.Errorf("creating the cAdvisor manager: %w", err)
	}
	if err := m.Start(); err != nil {
		return nil, fmt.Errorf("starting the cAdvisor manager: %w", err)
	}
	c := &cadvisorMachine{m: m}
	// The root cgroup's first sample is taken right after the start; waiting for it means the
	// first summary does not fail.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := c.RootInfo(); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	return c, nil
}

func (c *cadvisorMachine) MachineInfo() (*cadvisorapi.MachineInfo, error) {
	return c.m.GetMachineInfo()
}

func (c *cadvisorMachine) VersionInfo() (*cadvisorapi.VersionInfo, error) {
	return c.m.GetVersionInfo()
}

func (c *cadvisorMachine) RootInfo() (*cadvisorapi.ContainerInfo, error) {
	infos, err := c.m.GetContainerInfoV2("/", cadvisorapi.RequestOptions{IdType: cadvisorapi.TypeName, Count: 2})
	if err != nil {
		return nil, fmt.Errorf("reading the root cgroup from cAdvisor: %w", err)
	}
	root, ok := infos["/"]
	if !ok {
		return nil, fmt.Errorf("cAdvisor returned no root cgroup")
	}
	return &root, nil
}

func (c *cadvisorMachine) DirFsInfo(dir string) (cadvisorapi.FsInfo, error) {
	fi, err := c.m.GetDirFsInfo(dir)
	if err != nil {
		return fi, fmt.Errorf("file system of %s: %w", dir, err)
	}
	return fi, nil
}
