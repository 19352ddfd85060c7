package volumes

import (
	"fmt"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
	"k8s.io/mount-utils"
)

// mountInfoPath is the mount table of vk-cri's own mount namespace.
const mountInfoPath = "/proc/self/mountinfo"

// ShareRootDir makes the root dir a shared mount, as the kubelet does with its own root dir at
// start: containerd refuses HostToContainer and Bidirectional propagation for a volume whose
// source is on a private mount, and a shared root lets a mount made under it (on the host, or by
// a privileged container with Bidirectional propagation) reach the containers that ask for it.
// Nothing is done when the root dir is on a shared mount already (a restart of vk-cri).
func (m *Manager) ShareRootDir() error {
	infos, err := mount.ParseMountInfo(mountInfoPath)
	if err != nil {
		return fmt.Errorf("reading the mount table: %w", err)
	}
	root := m.layout.root
	if onSharedMount(root, infos) {
		return nil
	}
	m.log.WithField("dir", root).Info("bind-mounting the root dir on itself with shared propagation")
	if err := unix.Mount(root, root, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind-mounting %s: %w", root, err)
	}
	if err := unix.Mount("", root, "", unix.MS_SHARED|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("making %s rshared: %w", root, err)
	}
	return nil
}

// onSharedMount reports whether the mount that holds path (the deepest mount point above it; of
// mounts stacked on one point, the last) propagates as shared.
func onSharedMount(path string, infos []mount.MountInfo) bool {
	path = filepath.Clean(path)
	var holder *mount.MountInfo
	for i := range infos {
		mp := infos[i].MountPoint
		if !within(path, mp) {
			continue
		}
		if holder == nil || len(mp) >= len(holder.MountPoint) {
			holder = &infos[i]
		}
	}
	if holder == nil {
		return false
	}
	for _, f := range holder.OptionalFields {
		if strings.HasPrefix(f, "shared:") {
			return true
		}
	}
	return false
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	return path == dir || dir == "/" || strings.HasPrefix(path, dir+"/")
}
