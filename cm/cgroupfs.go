package cm

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/opencontainers/cgroups"
	"github.com/opencontainers/cgroups/fs"
	"github.com/opencontainers/cgroups/fs2"
	"github.com/opencontainers/cgroups/fscommon"
	"github.com/opencontainers/cgroups/manager"
)

// Cgroups is what Manager needs of the host's cgroups: the narrow interface between the
// kubelet's rules and the files.
type Cgroups interface {
	// Exists reports whether the cgroup exists in every hierarchy that matters.
	Exists(name CgroupName) bool
	// Create makes the cgroup and sets it.
	Create(name CgroupName, rc *ResourceConfig) error
	// Update sets an existing cgroup.
	Update(name CgroupName, rc *ResourceConfig) error
	// Read gives the cgroup's memory limit, cpu shares, quota and period.
	Read(name CgroupName) (*ResourceConfig, error)
	// MemoryUsage is the cgroup's memory usage in bytes.
	MemoryUsage(name CgroupName) (int64, error)
	// Destroy kills what still runs in the cgroup and removes it.
	Destroy(name CgroupName) error
	// Children lists the names of a cgroup's child cgroups (in the memory hierarchy on v1).
	Children(name CgroupName) ([]string, error)
}

// FS writes cgroups through github.com/opencontainers/cgroups, the way the kubelet's cgroup
// manager does (cgroup_manager_linux.go): with the cgroupfs driver its fs (v1) or fs2 (v2)
// manager, with the systemd driver its systemd manager (a slice unit per cgroup, made and
// set over D-Bus), in both cases with devices and freezing skipped.
type FS struct {
	// V2 selects the unified hierarchy's files (memory.max, cpu.max, cpu.weight, pids.max).
	V2 bool
	// Systemd selects the systemd driver: each cgroup is the slice its name expands to
	// (CgroupName.ToSystemd), created by systemd.
	Systemd bool
	// Mounts maps a v1 subsystem to its mount point, or "" to the v2 mount point. Nil: the
	// host's, found by the library.
	Mounts map[string]string
	// HugePageSizes are the host's huge page sizes ("2MB" ...); set only where hugetlb is
	// mounted (v1) or enabled (v2), as the kubelet writes hugetlb only then.
	HugePageSizes []string
}

// HostFS is the host's cgroups with the given driver: v1 or v2 as mounted, hugetlb where
// available.
func HostFS(driver Driver) *FS {
	f := &FS{V2: cgroups.IsCgroup2UnifiedMode(), Systemd: driver == DriverSystemd}
	if f.hugetlbAvailable() {
		f.HugePageSizes = cgroups.HugePageSizes()
	}
	return f
}

func (f *FS) hugetlbAvailable() bool {
	if f.V2 {
		b, err := os.ReadFile("/sys/fs/cgroup/cgroup.controllers")
		return err == nil && strings.Contains(" "+strings.TrimSpace(string(b))+" ", " hugetlb ")
	}
	_, err := cgroups.FindCgroupMountpoint("", "hugetlb")
	return err == nil
}

// PageSizesBytes are the host's huge page sizes in bytes.
func (f *FS) PageSizesBytes() []int64 {
	var out []int64
	for _, s := range f.HugePageSizes {
		if b, err := pageSizeBytes(s); err == nil {
			out = append(out, b)
		}
	}
	return out
}

// v1Required are the v1 controllers whose cgroup must exist (the kubelet's Validate allow-list).
var v1Required = []string{"cpu", "cpuacct", "cpuset", "memory", "pids", "hugetlb"}

// driver is the FS's driver.
func (f *FS) driver() Driver {
	if f.Systemd {
		return DriverSystemd
	}
	return DriverCgroupfs
}

// display is the cgroup as errors name it: its path under the cgroup mount with the FS's driver.
func (f *FS) display(name CgroupName) string {
	p, err := f.driver().Parent(name)
	if err != nil {
		return name.ToCgroupfs()
	}
	return p
}

func (f *FS) manager(name CgroupName, rc *ResourceConfig) (cgroups.Manager, error) {
	if f.Systemd {
		return f.systemdManager(name, rc)
	}
	cg := &cgroups.Cgroup{Path: name.ToCgroupfs(), Resources: f.resources(rc)}
	if f.V2 {
		dir := ""
		if f.Mounts != nil {
			dir = filepath.Join(f.Mounts[""], name.ToCgroupfs())
		}
		return fs2.NewManager(cg, dir)
	}
	var paths map[string]string
	if f.Mounts != nil {
		paths = map[string]string{}
		for sub, mp := range f.Mounts {
			paths[sub] = filepath.Join(mp, name.ToCgroupfs())
		}
	}
	return fs.NewManager(cg, paths)
}

// systemdManager is the library's systemd manager for the slice of name, given its Name and
// Parent as the kubelet's libctCgroupConfig splits the expanded slice path (the root's children
// have the parent "-.slice").
func (f *FS) systemdManager(name CgroupName, rc *ResourceConfig) (cgroups.Manager, error) {
	parent, unit, err := systemdUnit(name)
	if err != nil {
		return nil, err
	}
	cg := &cgroups.Cgroup{Systemd: true, Parent: parent, Name: unit, Resources: f.resources(rc)}
	return manager.New(cg)
}

// systemdUnit is the slice unit of a cgroup and its parent slice, as the library's systemd
// manager wants them (Parent, Name): kubepods-burstable-pod1.slice in kubepods-burstable.slice;
// kubepods.slice in "-.slice", the root slice.
func systemdUnit(name CgroupName) (parent, unit string, err error) {
	expanded, err := name.ToSystemd()
	if err != nil {
		return "", "", err
	}
	if expanded == "/" {
		return "", "", fmt.Errorf("the root cgroup is no slice of its own")
	}
	dir, base := path.Split(expanded)
	if dir == "/" {
		return "-.slice", base, nil
	}
	return path.Base(dir), base, nil
}

// resources converts the kubelet's settings into the library's (cgroup_manager_linux.go
// toResources): shares become cpu.weight on v2; hugetlb limits for every host page size (0 for
// the sizes not given); unified files on v2 only.
func (f *FS) resources(rc *ResourceConfig) *cgroups.Resources {
	r := &cgroups.Resources{SkipDevices: true, SkipFreezeOnSet: true}
	if rc == nil {
		return r
	}
	if rc.Memory != nil {
		r.Memory = *rc.Memory
	}
	if rc.CPUShares != nil {
		if f.V2 {
			r.CpuWeight = SharesToWeight(*rc.CPUShares)
		} else {
			r.CpuShares = *rc.CPUShares
		}
	}
	if rc.CPUQuota != nil {
		r.CpuQuota = *rc.CPUQuota
	}
	if rc.CPUPeriod != nil {
		r.CpuPeriod = *rc.CPUPeriod
	}
	if rc.PidsLimit != nil {
		r.PidsLimit = rc.PidsLimit
	}
	r.CpusetCpus = rc.CPUSet
	if len(f.HugePageSizes) > 0 && rc.HugePageLimit != nil {
		for _, size := range f.HugePageSizes {
			b, err := pageSizeBytes(size)
			if err != nil {
				continue
			}
			r.HugetlbLimit = append(r.HugetlbLimit, &cgroups.HugepageLimit{Pagesize: size, Limit: uint64(rc.HugePageLimit[b])})
		}
	}
	if f.V2 && rc.Unified != nil {
		r.Unified = make(map[string]string, len(rc.Unified))
		for k, v := range rc.Unified {
			r.Unified[k] = v
		}
	}
	return r
}

// Exists: on v1 the cgroup's directory in each required controller that is mounted; on v2 its
// directory.
func (f *FS) Exists(name CgroupName) bool {
	m, err := f.manager(name, nil)
	if err != nil {
		return false
	}
	if f.V2 {
		return cgroups.PathExists(m.Path(""))
	}
	paths := m.GetPaths()
	for _, sub := range v1Required {
		if p, ok := paths[sub]; ok && !cgroups.PathExists(p) {
			return false
		}
	}
	return true
}

// Create makes the cgroup (Apply without a process) and sets it; like the kubelet, a setting
// the kernel refuses does not undo the creation, but it is returned.
func (f *FS) Create(name CgroupName, rc *ResourceConfig) error {
	m, err := f.manager(name, rc)
	if err != nil {
		return err
	}
	if err := m.Apply(-1); err != nil {
		return fmt.Errorf("creating cgroup %s: %w", f.display(name), err)
	}
	if err := m.Set(f.resources(rc)); err != nil {
		return fmt.Errorf("setting cgroup %s: %w", f.display(name), err)
	}
	return nil
}

// Update sets the cgroup.
func (f *FS) Update(name CgroupName, rc *ResourceConfig) error {
	m, err := f.manager(name, rc)
	if err != nil {
		return err
	}
	if err := m.Set(f.resources(rc)); err != nil {
		return fmt.Errorf("setting cgroup %s: %w", f.display(name), err)
	}
	return nil
}

// Read gives the cgroup's memory limit and cpu settings, as the kubelet's GetCgroupConfig reads
// them: memory.limit_in_bytes, cpu.shares, cpu.cfs_quota_us and cpu.cfs_period_us on v1;
// memory.max ("max" reads as -1), cpu.weight (as shares) and cpu.max on v2.
func (f *FS) Read(name CgroupName) (*ResourceConfig, error) {
	m, err := f.manager(name, nil)
	if err != nil {
		return nil, err
	}
	rc := &ResourceConfig{}
	if f.V2 {
		dir := m.Path("")
		mem, err := fscommon.GetCgroupParamUint(dir, "memory.max")
		if err != nil {
			return nil, err
		}
		memory := int64(mem)
		weight, err := fscommon.GetCgroupParamUint(dir, "cpu.weight")
		if err != nil {
			return nil, err
		}
		shares := WeightToShares(weight)
		cpuMax, err := fscommon.GetCgroupParamString(dir, "cpu.max")
		if err != nil {
			return nil, err
		}
		quota, period, err := parseCPUMax(cpuMax)
		if err != nil {
			return nil, fmt.Errorf("%s/cpu.max: %w", dir, err)
		}
		rc.Memory, rc.CPUShares, rc.CPUQuota, rc.CPUPeriod = &memory, &shares, &quota, &period
		return rc, nil
	}
	mem, err := fscommon.GetCgroupParamUint(m.Path("memory"), "memory.limit_in_bytes")
	if err != nil {
		return nil, err
	}
	memory := int64(mem)
	cpuDir := m.Path("cpu")
	shares, err := fscommon.GetCgroupParamUint(cpuDir, "cpu.shares")
	if err != nil {
		return nil, err
	}
	quotaStr, err := fscommon.GetCgroupParamString(cpuDir, "cpu.cfs_quota_us")
	if err != nil {
		return nil, err
	}
	quota, err := strconv.ParseInt(quotaStr, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("%s/cpu.cfs_quota_us: %w", cpuDir, err)
	}
	period, err := fscommon.GetCgroupParamUint(cpuDir, "cpu.cfs_period_us")
	if err != nil {
		return nil, err
	}
	rc.Memory, rc.CPUShares, rc.CPUQuota, rc.CPUPeriod = &memory, &shares, &quota, &period
	return rc, nil
}

// parseCPUMax reads cgroup v2's "<quota|max> <period>"; max is -1.
func parseCPUMax(s string) (int64, uint64, error) {
	fields := strings.Fields(s)
	if len(fields) != 2 {
		return 0, 0, fmt.Errorf("unexpected content %q", s)
	}
	quota := int64(-1)
	if fields[0] != "max" {
		q, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, 0, err
		}
		quota = q
	}
	period, err := strconv.ParseUint(fields[1], 10, 64)
	return quota, period, err
}

// MemoryUsage reads memory.usage_in_bytes (v1) or memory.current (v2).
func (f *FS) MemoryUsage(name CgroupName) (int64, error) {
	m, err := f.manager(name, nil)
	if err != nil {
		return 0, err
	}
	dir, file := m.Path("memory"), "memory.usage_in_bytes"
	if f.V2 {
		dir, file = m.Path(""), "memory.current"
	}
	v, err := fscommon.GetCgroupParamUint(dir, file)
	return int64(v), err
}

// Destroy kills the processes left in the cgroup and below it (the kubelet's
// tryKillingCgroupProcesses: a few rounds), then removes its directories.
func (f *FS) Destroy(name CgroupName) error {
	m, err := f.manager(name, nil)
	if err != nil {
		return err
	}
	var killErr error
	for range 5 {
		pids := allPids(m)
		if len(pids) == 0 {
			killErr = nil
			break
		}
		killErr = nil
		for _, pid := range pids {
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
				killErr = fmt.Errorf("killing process %d of cgroup %s: %w", pid, f.display(name), err)
			}
		}
	}
	if killErr != nil {
		return killErr
	}
	if err := m.Destroy(); err != nil {
		return fmt.Errorf("removing cgroup %s: %w", f.display(name), err)
	}
	return nil
}

// allPids are the processes in the cgroup and below it in every hierarchy, as the kubelet's
// Pids walks every mount point (a process may have been moved in one hierarchy only).
func allPids(m cgroups.Manager) []int {
	seen := map[int]bool{}
	var out []int
	for _, dir := range m.GetPaths() {
		pids, err := cgroups.GetAllPids(dir)
		if err != nil {
			continue
		}
		for _, pid := range pids {
			if !seen[pid] {
				seen[pid] = true
				out = append(out, pid)
			}
		}
	}
	return out
}

// Children lists the cgroup's child directories (memory hierarchy on v1).
func (f *FS) Children(name CgroupName) ([]string, error) {
	m, err := f.manager(name, nil)
	if err != nil {
		return nil, err
	}
	dir := m.Path("memory")
	if f.V2 {
		dir = m.Path("")
	}
	if dir == "" {
		return nil, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if !f.Systemd {
			out = append(out, path.Base(e.Name()))
			continue
		}
		// A child slice's directory is the whole name; its last component is what the
		// kubelet's ParseSystemdToCgroupName gives back. Scopes (the containers') are no
		// child cgroups of this hierarchy.
		if c, ok := lastSystemdComponent(e.Name()); ok {
			out = append(out, c)
		}
	}
	return out, nil
}

// lastSystemdComponent is the last component of a slice directory's name, unescaped
// (kubepods-burstable-pod1_2.slice: pod1-2), as the kubelet's ParseSystemdToCgroupName reads it.
func lastSystemdComponent(dir string) (string, bool) {
	base, ok := strings.CutSuffix(dir, sliceSuffix)
	if !ok || base == "" {
		return "", false
	}
	parts := strings.Split(base, "-")
	return strings.ReplaceAll(parts[len(parts)-1], "_", "-"), true
}

// pageSizeBytes parses the library's huge page size names ("2MB", "1GB", binary units).
func pageSizeBytes(s string) (int64, error) {
	for i, suffix := range []string{"KB", "MB", "GB"} {
		if n, ok := strings.CutSuffix(s, suffix); ok {
			v, err := strconv.ParseInt(n, 10, 64)
			if err != nil {
				return 0, err
			}
			return v << (10 * (i + 1)), nil
		}
	}
	return 0, fmt.Errorf("unknown huge page size %q", s)
}
