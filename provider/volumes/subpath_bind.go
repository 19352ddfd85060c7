package volumes

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
	"k8s.io/mount-utils"
)

// descriptorBinder bind-mounts the file or directory open as a descriptor onto a target path,
// and takes such a mount away.
type descriptorBinder interface {
	bindDescriptor(fd int, target string) error
	unbind(target string) error
}

// syscallBinder binds with mount(2) itself, from "/proc/self/fd/N". The kernel resolves that
// magic link to the very file the descriptor holds, whatever its path has become meanwhile: a
// directory swapped for a symlink to "/" after it was checked is not what gets mounted.
//
// The mount program cannot be given that guarantee back: util-linux's mount canonicalises its
// source (realpath) before mount(2), turning the descriptor back into a path that is walked
// again, which is the race of CVE-2021-25741 (the kubelet passes it --no-canonicalize,
// pkg/volume/util/subpath/subpath_linux.go). Calling mount(2) needs no external program at all.
type syscallBinder struct{}

func (syscallBinder) bindDescriptor(fd int, target string) error {
	source := descriptorPath("self", fd)
	if err := unix.Mount(source, target, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind-mounting %s (the checked subPath) on %s: %w", source, target, err)
	}
	return nil
}

// unbind detaches the mount at target at once (MNT_DETACH, as the kubelet's lazy unmount of a
// stale subPath): a container still using it keeps it until it exits.
func (syscallBinder) unbind(target string) error {
	if err := unix.Unmount(target, unix.MNT_DETACH); err != nil {
		return fmt.Errorf("unmounting %s: %w", target, err)
	}
	return nil
}

// descriptorPath is fd's magic link under /proc/<pid>.
func descriptorPath(pid string, fd int) string {
	return "/proc/" + pid + "/fd/" + strconv.Itoa(fd)
}

// mounterBinder binds through a mount.Interface: tests give mount-utils' fake, which records the
// source (a descriptor of this process) and mounts nothing.
type mounterBinder struct{ mounter mount.Interface }

func (b mounterBinder) bindDescriptor(fd int, target string) error {
	return b.mounter.MountSensitiveWithoutSystemd(descriptorPath(strconv.Itoa(os.Getpid()), fd), target, "", []string{"bind"}, nil)
}

func (b mounterBinder) unbind(target string) error { return b.mounter.Unmount(target) }
