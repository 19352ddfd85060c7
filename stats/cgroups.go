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
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vk-cri/vk-cri/cm"
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

// podsCgroupPath is kubepods' path under the cgroup mount with the driver
// (<root>/kubepods, or /kubepods.slice with systemd).
func podsCgroupPath(cgroupRoot string, driver cm.Driver) string {
	p, err := driver.Parent(cm.Layout{Root: cm.ParseCgroupfs(cgroupRoot)}.Kubepods())
	if err != nil {
		return path.Join("/", cgroupRoot, "kubepods")
	}
	return p
}

// podCgroupCandidates are where the pod's cgroup may be, by QoS class, as vk-cri creates them:
// <root>/kubepods[/<qos>]/pod<uid> with cgroupfs, the kubepods[-<qos>]-pod<uid>.slice slices
// with systemd (cm's names, the kubelet's).
func podCgroupCandidates(cgroupRoot string, driver cm.Driver, uid string) []string {
	l := cm.Layout{Root: cm.ParseCgroupfs(cgroupRoot)}
	var out []string
	for _, class := range []v1.PodQOSClass{v1.PodQOSBestEffort, v1.PodQOSBurstable, v1.PodQOSGuaranteed} {
		if p, err := driver.Parent(l.Pod(class, types.UID(uid))); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// containerCgroupCandidates are where a container's cgroup may be in its pod's: the container's
// id with cgroupfs; with systemd the scope the runtime asks runc for (containerd:
// cri-containerd-<id>.scope; CRI-O: crio-<id>.scope).
func containerCgroupCandidates(podCgroup string, driver cm.Driver, id string) []string {
	if driver != cm.DriverSystemd {
		return []string{path.Join(podCgroup, id)}
	}
	return []string{
		path.Join(podCgroup, "cri-containerd-"+id+".scope"),
		path.Join(podCgroup, "crio-"+id+".scope"),
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
