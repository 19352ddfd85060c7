package stats

import (
	"errors"
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/google/cadvisor/lib/container/common"
	"github.com/google/cadvisor/lib/container/libcontainer"
	cadvisorapi "github.com/google/cadvisor/lib/model"
)

// cgroupReader reads one cgroup's stats at the moment it is asked, with cAdvisor's handler.
type cgroupReader interface {
	// Read returns the cgroup's stats; with network set, also the network of the cgroup's first
	// process. os.ErrNotExist when the cgroup is gone.
	Read(name string, network bool) (*cadvisorapi.ContainerStats, error)
	// Exists tells whether the cgroup is there.
	Exists(name string) bool
	// MemoryLimit is the cgroup's memory limit, 0 when unknown or unlimited.
	MemoryLimit(name string) uint64
}

type cadvisorCgroups struct {
	subsystems map[string]string // controller → mount point
}

func newCadvisorCgroups() (*cadvisorCgroups, error) {
	subs, err := libcontainer.GetCgroupSubsystems(includedMetrics)
	if err != nil {
		return nil, fmt.Errorf("finding the cgroup mounts: %w", err)
	}
	return &cadvisorCgroups{subsystems: subs}, nil
}

func (c *cadvisorCgroups) Exists(name string) bool {
	return common.CgroupExists(common.MakeCgroupPaths(c.subsystems, name))
}

func (c *cadvisorCgroups) Read(name string, network bool) (*cadvisorapi.ContainerStats, error) {
	paths := common.MakeCgroupPaths(c.subsystems, name)
	if !common.CgroupExists(paths) {
		return nil, fmt.Errorf("cgroup %s: %w", name, os.ErrNotExist)
	}
	mgr, err := libcontainer.NewCgroupManager(name, paths)
	if err != nil {
		return nil, fmt.Errorf("cgroup %s: %w", name, err)
	}
	pid := 0
	if network {
		// A pod's processes live in its containers' child cgroups.
		if pids, err := mgr.GetAllPids(); err == nil && len(pids) > 0 {
			pid = pids[0]
		}
	}
	st, err := libcontainer.NewHandler(mgr, "/", pid, includedMetrics).GetStats()
	if err != nil {
		if !common.CgroupExists(paths) {
			return nil, fmt.Errorf("cgroup %s: %w", name, os.ErrNotExist)
		}
		return nil, fmt.Errorf("reading cgroup %s: %w", name, err)
	}
	if st.Network != nil && len(st.Network.Interfaces) == 0 {
		st.Network = nil
	}
	return st, nil
}

// podCgroupCandidates are where the pod's cgroup may be, by QoS class, as vk-cri creates them
// (<root>/kubepods[/<qos>]/pod<uid>, the kubelet's cgroupfs layout).
func podCgroupCandidates(cgroupRoot, uid string) []string {
	base := path.Join("/", cgroupRoot, "kubepods")
	return []string{
		path.Join(base, "besteffort", "pod"+uid),
		path.Join(base, "burstable", "pod"+uid),
		path.Join(base, "pod"+uid),
	}
}

func isNotExist(err error) bool { return errors.Is(err, os.ErrNotExist) }

func (c *cadvisorCgroups) MemoryLimit(name string) uint64 {
	var file string
	if mp, ok := c.subsystems["memory"]; ok {
		file = path.Join(mp, name, "memory.limit_in_bytes")
	} else if mp, ok := c.subsystems[""]; ok {
		file = path.Join(mp, name, "memory.max")
	} else {
		return 0
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || v > unlimitedMemory {
		return 0
	}
	return v
}
