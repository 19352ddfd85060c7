package volumes

import (
	"os"
	"path/filepath"
	"syscall"

	v1 "k8s.io/api/core/v1"
)

// Group permission bits the kubelet adds for an fsGroup: read-write volumes get rw, read-only
// ones r, directories x and setgid so that new files inherit the group.
const (
	groupRW os.FileMode = 0o660
	groupRO os.FileMode = 0o440
	groupX  os.FileMode = 0o110
)

func fsGroup(pod *v1.Pod) *int64 {
	if pod.Spec.SecurityContext == nil {
		return nil
	}
	return pod.Spec.SecurityContext.FSGroup
}

// setOwnershipFor applies the pod's fsGroup to a volume. With fsGroupChangePolicy
// OnRootMismatch a volume whose root already has the group and bits is left alone.
func setOwnershipFor(pod *v1.Pod, dir string, readOnly bool) error {
	gid := fsGroup(pod)
	if gid == nil {
		return nil
	}
	sc := pod.Spec.SecurityContext
	if sc.FSGroupChangePolicy != nil && *sc.FSGroupChangePolicy == v1.FSGroupChangeOnRootMismatch && rootMatches(dir, *gid, readOnly) {
		return nil
	}
	return setOwnership(dir, gid, readOnly)
}

func rootMatches(dir string, gid int64, readOnly bool) bool {
	fi, err := os.Stat(dir)
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	want := groupRW
	if readOnly {
		want = groupRO
	}
	return ok && int64(st.Gid) == gid && fi.Mode().Perm()&want == want && fi.Mode()&os.ModeSetgid != 0
}

// setOwnership gives everything under dir the group gid and the group bits, without following
// symlinks, as the kubelet does for volumes that support ownership management.
func setOwnership(dir string, gid *int64, readOnly bool) error {
	if gid == nil {
		return nil
	}
	mask := groupRW
	if readOnly {
		mask = groupRO
	}
	return filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if err := os.Lchown(path, -1, int(*gid)); err != nil {
			return err
		}
		if info.Mode()&os.ModeSymlink != 0 {
			return nil
		}
		m := mask
		if info.IsDir() {
			m |= os.ModeSetgid | groupX
		}
		return os.Chmod(path, info.Mode()|m)
	})
}
