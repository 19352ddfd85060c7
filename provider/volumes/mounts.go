package volumes

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/mount-utils"
)

// ExpandFunc expands $(VAR) references of a subPathExpr with the container's environment.
type ExpandFunc func(string) (string, error)

// ContainerMounts returns the CRI mounts of a container's volumeMounts, in their order. The
// pod's volumes must have been set up. A subPath is resolved inside its volume and bind-mounted
// to a path of its own, so that a symlink in the volume cannot make the runtime mount anything
// outside it.
func (m *Manager) ContainerMounts(pod *v1.Pod, c *v1.Container, expand ExpandFunc) ([]*runtimeapi.Mount, error) {
	out := make([]*runtimeapi.Mount, 0, len(c.VolumeMounts))
	for i, vm := range c.VolumeMounts {
		vol, ok := m.store.volume(pod.UID, vm.Name)
		if !ok {
			return nil, fmt.Errorf("cannot find volume %q to mount into container %q", vm.Name, c.Name)
		}
		hostPath := vol.Path
		sub := vm.SubPath
		if vm.SubPathExpr != "" {
			if expand == nil {
				return nil, fmt.Errorf("subPathExpr of volume %q: no environment to expand it with", vm.Name)
			}
			var err error
			if sub, err = expand(vm.SubPathExpr); err != nil {
				return nil, err
			}
		}
		if sub != "" {
			if err := validateSubPath(sub); err != nil {
				return nil, err
			}
			target, err := m.prepareSubPath(pod.UID, vm.Name, vol.Path, sub, c.Name, i)
			if err != nil {
				// The container's status carries the kubelet's words; the log says why.
				m.log.WithFields(logrus.Fields{"pod": pod.Namespace + "/" + pod.Name, "container": c.Name, "volume": vm.Name}).WithError(err).Warn("subPath refused")
				return nil, fmt.Errorf("failed to prepare subPath for volumeMount %q of container %q", vm.Name, c.Name)
			}
			hostPath = target
		}
		prop, err := propagation(vm.MountPropagation)
		if err != nil {
			return nil, err
		}
		out = append(out, &runtimeapi.Mount{
			ContainerPath: vm.MountPath,
			HostPath:      hostPath,
			Readonly:      vm.ReadOnly || vol.ReadOnly,
			Propagation:   prop,
		})
	}
	return out, nil
}

func propagation(mode *v1.MountPropagationMode) (runtimeapi.MountPropagation, error) {
	if mode == nil {
		return runtimeapi.MountPropagation_PROPAGATION_PRIVATE, nil
	}
	switch *mode {
	case v1.MountPropagationNone:
		return runtimeapi.MountPropagation_PROPAGATION_PRIVATE, nil
	case v1.MountPropagationHostToContainer:
		return runtimeapi.MountPropagation_PROPAGATION_HOST_TO_CONTAINER, nil
	case v1.MountPropagationBidirectional:
		return runtimeapi.MountPropagation_PROPAGATION_BIDIRECTIONAL, nil
	}
	return 0, fmt.Errorf("invalid MountPropagation mode: %q", *mode)
}

// prepareSubPath creates a missing subPath directory (with the volume's mode, special bits
// included: an fsGroup volume's setgid and a tmpfs root's sticky bit), opens the subPath
// without leaving the volume and bind-mounts what it opened to the container's subPath target.
func (m *Manager) prepareSubPath(uid types.UID, volume, volumePath, sub, container string, index int) (string, error) {
	target := m.layout.subPathTarget(uid, volume, container, index)
	fd, err := openResolvedBeneath(volumePath, sub)
	if errors.Is(err, unix.ENOENT) {
		fi, serr := os.Stat(volumePath)
		if serr != nil {
			return "", serr
		}
		if err := makeDirBeneath(volumePath, sub, fi.Mode()); err != nil {
			return "", err
		}
		fd, err = openBeneath(volumePath, sub)
	}
	if errors.Is(err, unix.EXDEV) || errors.Is(err, unix.ELOOP) {
		return "", &EscapeError{Volume: volume, SubPath: sub, Err: err}
	}
	if err != nil {
		return "", err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return "", err
	}
	reuse, err := m.reuseSubPathTarget(target, &st)
	if err != nil || reuse {
		return target, err
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o750); err != nil {
		return "", err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		err = os.Mkdir(target, 0o750)
	} else {
		var f *os.File
		if f, err = os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_RDONLY, 0o640); err == nil {
			f.Close()
		}
	}
	if err != nil && !os.IsExist(err) {
		return "", err
	}
	// The descriptor is what was checked; mounting it (not the path) leaves no window for a
	// swapped symlink (syscallMounts).
	if err := m.calls.bindDescriptor(fd, target); err != nil {
		return "", err
	}
	return target, nil
}

// reuseSubPathTarget tells whether the target of a restarted container's subPath is mounted
// already with the subPath's file (st, as just opened). A mount of anything else (the subPath
// was removed or replaced in the volume since) is lazily unmounted to be bound again, and so is
// a corrupted one, as the kubelet's prepareSubpathTarget does (subpath_linux.go): a bind of a
// removed directory would otherwise keep the container from starting for good. Mount points are
// told from the mount table (IsMountPoint): a bind from the same file system does not show in a
// device comparison.
func (m *Manager) reuseSubPathTarget(target string, st *unix.Stat_t) (bool, error) {
	mounted, err := m.mounter.IsMountPoint(target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil && !mount.IsCorruptedMnt(err):
		return false, fmt.Errorf("checking subPath target %s: %w", target, err)
	case err == nil && !mounted:
		return false, nil
	case err == nil:
		var now unix.Stat_t
		if unix.Stat(target, &now) == nil && now.Dev == st.Dev && now.Ino == st.Ino {
			return true, nil
		}
	}
	if err := m.calls.unbind(target); err != nil {
		return false, fmt.Errorf("unmounting stale subPath target %s: %w", target, err)
	}
	return false, nil
}
