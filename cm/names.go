package cm

import (
	"fmt"
	"path"
	"strings"

	"github.com/opencontainers/cgroups/systemd"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Driver is how cgroups are named to the runtime: cgroupfs paths or systemd slices.
type Driver string

const (
	DriverCgroupfs Driver = "cgroupfs"
	DriverSystemd  Driver = "systemd"
)

// Names of the kubelet's cgroup hierarchy (node_container_manager_linux.go, pod_container_manager_linux.go).
const (
	kubepodsName = "kubepods"
	podPrefix    = "pod"
	sliceSuffix  = ".slice"
)

// CgroupName is a cgroup as the kubelet names it independently of the driver: its path
// components from the root, e.g. [kubepods burstable pod<uid>].
type CgroupName []string

// Child is the name with more components appended.
func (n CgroupName) Child(components ...string) CgroupName {
	return append(append(CgroupName{}, n...), components...)
}

// ToCgroupfs is the cgroupfs path: /kubepods/burstable/pod<uid>.
func (n CgroupName) ToCgroupfs() string {
	return "/" + path.Join(n...)
}

// ToSystemd is the systemd slice path, as the kubelet's CgroupName.ToSystemd: each component's
// '-' becomes '_' (systemd reads '-' as nesting), the components are joined with '-' into one
// slice name, and that is expanded into the slice's path, e.g. [kubepods burstable pod1-2] is
// /kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1_2.slice. The root is "/".
func (n CgroupName) ToSystemd() (string, error) {
	if len(n) == 0 || (len(n) == 1 && n[0] == "") {
		return "/", nil
	}
	parts := make([]string, len(n))
	for i, p := range n {
		parts[i] = strings.ReplaceAll(p, "-", "_")
	}
	return systemd.ExpandSlice(strings.Join(parts, "-") + sliceSuffix)
}

// ParseCgroupfs turns a cgroupfs path (such as --cgroup-root) into a CgroupName.
func ParseCgroupfs(p string) CgroupName {
	p = strings.Trim(path.Clean("/"+p), "/")
	if p == "" {
		return CgroupName{}
	}
	return CgroupName(strings.Split(p, "/"))
}

// Layout places the kubelet's cgroups under a root (--cgroup-root).
type Layout struct {
	Root CgroupName
}

// Kubepods is the node-allocatable cgroup, the parent of all pods' cgroups.
func (l Layout) Kubepods() CgroupName { return l.Root.Child(kubepodsName) }

// QOS is the cgroup of a QoS class: kubepods itself for Guaranteed, kubepods/burstable and
// kubepods/besteffort for the others.
func (l Layout) QOS(class v1.PodQOSClass) CgroupName {
	switch class {
	case v1.PodQOSBurstable:
		return l.Kubepods().Child("burstable")
	case v1.PodQOSBestEffort:
		return l.Kubepods().Child("besteffort")
	}
	return l.Kubepods()
}

// Pod is the cgroup of a pod of the given class and UID: <qos>/pod<uid>.
func (l Layout) Pod(class v1.PodQOSClass, uid types.UID) CgroupName {
	return l.QOS(class).Child(podPrefix + string(uid))
}

// Parent is the string the runtime gets as the sandbox's cgroup parent for the name, as the
// kubelet's GetPodContainerName gives it (cgroupManager.Name): the cgroupfs path, or with the
// systemd driver the expanded slice path
// (/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid>.slice; containerd takes
// its last element as the slice to put the containers' scopes in).
func (d Driver) Parent(n CgroupName) (string, error) {
	switch d {
	case DriverCgroupfs, "":
		return n.ToCgroupfs(), nil
	case DriverSystemd:
		return n.ToSystemd()
	}
	return "", fmt.Errorf("unknown cgroup driver %q", d)
}

// PodUIDOf reports whether a cgroup's last component names a pod cgroup (pod<uid>), and its
// UID, as the kubelet's IsPodCgroup splits it: "pod" must start it and occur once.
func PodUIDOf(base string) (types.UID, bool) {
	parts := strings.Split(base, podPrefix)
	if len(parts) != 2 || parts[0] != "" || parts[1] == "" {
		return "", false
	}
	return types.UID(parts[1]), true
}
