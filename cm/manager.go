package cm

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubectl/pkg/util/qos"
)

// Options configure a Manager.
type Options struct {
	// Root is --cgroup-root, the parent of kubepods.
	Root string
	// Pod are the kubelet settings that pod cgroups depend on.
	Pod PodOptions
	// V2 is true on a cgroup v2 host (the QoS cgroups' memory protection is reset there).
	V2 bool
	// PageSizes are the host's huge page sizes in bytes where hugetlb is available.
	PageSizes []int64
}

// Manager keeps the node's kubepods, QoS and pod cgroups as the kubelet's container manager
// does. It is safe for concurrent use; QoS updates are serialised as the kubelet's are.
type Manager struct {
	cg     Cgroups
	layout Layout
	opts   Options
	mu     sync.Mutex // serialises QoS updates
}

// NewManager manages the cgroups below opts.Root through cg.
func NewManager(cg Cgroups, opts Options) *Manager {
	return &Manager{cg: cg, layout: Layout{Root: ParseCgroupfs(opts.Root)}, opts: opts}
}

// Layout is where the manager's cgroups are.
func (m *Manager) Layout() Layout { return m.layout }

// Start creates kubepods with the node-allocatable limits (or updates it, when it exists, as the
// kubelet enforces node allocatable at each start) and the QoS cgroups (created, or updated to
// the kubelet's start-up values), as the kubelet's container manager does at start-up
// (createNodeAllocatableCgroups, enforceNodeAllocatableCgroups, qosContainerManager.Start).
func (m *Manager) Start(nodeAllocatable *ResourceConfig) error {
	kubepods := m.layout.Kubepods()
	if err := m.createOrUpdate(kubepods, nodeAllocatable); err != nil {
		return fmt.Errorf("node allocatable cgroup: %w", err)
	}
	configs, rootUnified := QOSCreateConfigs(m.opts.PageSizes, m.opts.V2)
	for _, class := range []v1.PodQOSClass{v1.PodQOSBurstable, v1.PodQOSBestEffort} {
		if err := m.createOrUpdate(m.layout.QOS(class), configs[class]); err != nil {
			return fmt.Errorf("top level %s QoS cgroup: %w", class, err)
		}
	}
	if rootUnified != nil {
		if err := m.cg.Update(kubepods, &ResourceConfig{Unified: rootUnified}); err != nil {
			return fmt.Errorf("resetting memory protection of %s: %w", kubepods.ToCgroupfs(), err)
		}
	}
	return nil
}

func (m *Manager) createOrUpdate(name CgroupName, rc *ResourceConfig) error {
	if m.cg.Exists(name) {
		return m.cg.Update(name, rc)
	}
	return m.cg.Create(name, rc)
}

// UpdateQOS sets the QoS cgroups for the node's active pods (the kubelet's UpdateQOSCgroups:
// before a new pod cgroup, after a pod is killed, and every minute).
func (m *Manager) UpdateQOS(active []*v1.Pod) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	configs := QOSResourceConfigs(active, m.opts.PageSizes)
	var errs []error
	for _, class := range []v1.PodQOSClass{v1.PodQOSGuaranteed, v1.PodQOSBurstable, v1.PodQOSBestEffort} {
		if err := m.cg.Update(m.layout.QOS(class), configs[class]); err != nil {
			errs = append(errs, fmt.Errorf("updating %s QoS cgroup: %w", class, err))
		}
	}
	return errors.Join(errs...)
}

// PodCgroup is the pod's cgroup (by its QoS class).
func (m *Manager) PodCgroup(pod *v1.Pod) CgroupName {
	return m.layout.Pod(qos.GetPodQOS(pod), pod.UID)
}

// PodExists reports whether the pod's cgroup exists.
func (m *Manager) PodExists(pod *v1.Pod) bool { return m.cg.Exists(m.PodCgroup(pod)) }

// EnsurePod creates the pod's cgroup with the kubelet's values if it does not exist, after
// updating the QoS cgroups for the active pods (which include this one), as the kubelet's
// SyncPod does before the sandbox (kubelet.go: UpdateQOSCgroups, then pcm.EnsureExists). An
// existing pod cgroup is left as it is: only a resize changes it. The QoS update's failure is
// not the pod's (the kubelet logs it and goes on); it is returned beside a nil create error
// wrapped as ErrQOSUpdate.
func (m *Manager) EnsurePod(pod *v1.Pod, active []*v1.Pod) error {
	name := m.PodCgroup(pod)
	if m.cg.Exists(name) {
		return nil
	}
	qosErr := m.UpdateQOS(active)
	if err := m.cg.Create(name, PodResourceConfig(pod, m.opts.Pod)); err != nil {
		return fmt.Errorf("unable to ensure pod container exists: failed to create container for %s: %w", name.ToCgroupfs(), err)
	}
	if qosErr != nil {
		return fmt.Errorf("%w: %w", ErrQOSUpdate, qosErr)
	}
	return nil
}

// ErrQOSUpdate marks an EnsurePod whose pod cgroup was made but whose QoS update failed.
var ErrQOSUpdate = errors.New("updating QoS cgroups")

// ReadPod reads the pod cgroup's memory and cpu settings.
func (m *Manager) ReadPod(pod *v1.Pod) (*ResourceConfig, error) {
	return m.cg.Read(m.PodCgroup(pod))
}

// PodMemoryUsage is the pod cgroup's memory usage.
func (m *Manager) PodMemoryUsage(pod *v1.Pod) (int64, error) {
	return m.cg.MemoryUsage(m.PodCgroup(pod))
}

// SetPod writes settings to the pod's cgroup (a step of a resize).
func (m *Manager) SetPod(pod *v1.Pod, rc *ResourceConfig) error {
	name := m.PodCgroup(pod)
	if err := m.cg.Update(name, rc); err != nil {
		return fmt.Errorf("failed to set cgroup config of %s: %w", name.ToCgroupfs(), err)
	}
	return nil
}

// DestroyPod kills what is left in the pod's cgroup and removes it, as the kubelet does once
// the pod is terminated (SyncTerminatedPod: pcm.Destroy). It goes by UID under each QoS cgroup
// (a pod known only from the runtime has no spec to tell its class). A cgroup already gone is
// not an error.
func (m *Manager) DestroyPod(uid types.UID) error {
	var errs []error
	for _, class := range []v1.PodQOSClass{v1.PodQOSGuaranteed, v1.PodQOSBurstable, v1.PodQOSBestEffort} {
		if err := m.destroy(m.layout.Pod(class, uid)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (m *Manager) destroy(name CgroupName) error {
	if err := m.cg.Destroy(name); err != nil {
		return fmt.Errorf("failed to delete cgroup paths for %s: %w", name.ToCgroupfs(), err)
	}
	return nil
}

// CleanupOrphans removes the pod cgroups of pods that may not run any more (the kubelet's
// cleanupOrphanedPodCgroups in its housekeeping): every pod<uid> cgroup under the QoS cgroups
// whose UID live does not hold. It returns the UIDs it removed.
func (m *Manager) CleanupOrphans(live func(types.UID) bool) ([]types.UID, error) {
	var removed []types.UID
	var errs []error
	for _, class := range []v1.PodQOSClass{v1.PodQOSGuaranteed, v1.PodQOSBurstable, v1.PodQOSBestEffort} {
		parent := m.layout.QOS(class)
		children, err := m.cg.Children(parent)
		if err != nil {
			errs = append(errs, fmt.Errorf("listing %s: %w", parent.ToCgroupfs(), err))
			continue
		}
		for _, c := range children {
			uid, ok := PodUIDOf(c)
			if !ok || live(uid) {
				continue
			}
			if err := m.destroy(parent.Child(c)); err != nil {
				errs = append(errs, err)
				continue
			}
			removed = append(removed, uid)
		}
	}
	return removed, errors.Join(errs...)
}

// HostMaxPIDs is the node's pid capacity as the kubelet reads it (stats/pidlimit): the smaller
// of kernel.pid_max and kernel.threads-max; 0 when neither can be read.
func HostMaxPIDs() int64 {
	var out int64
	for _, f := range []string{"/proc/sys/kernel/pid_max", "/proc/sys/kernel/threads-max"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			continue
		}
		if out == 0 || v < out {
			out = v
		}
	}
	return out
}

// HostCPUs is the node's online CPUs as a cpuset list ("0-1"), the kubelet's kubepods cpuset
// with the none CPU manager policy; empty when unknown.
func HostCPUs() string {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// HostMemTotal is the node's memory capacity (MemTotal of /proc/meminfo, as cAdvisor reads it).
func HostMemTotal() (int64, error) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("parsing MemTotal: %w", err)
			}
			return kb * 1024, nil
		}
	}
	return 0, errors.New("no MemTotal in /proc/meminfo")
}
