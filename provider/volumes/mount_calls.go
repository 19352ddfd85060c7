package volumes

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
	"k8s.io/mount-utils"
)

// mountCalls are the mounts the manager makes and takes away: tmpfs volumes, subPath binds from
// checked descriptors, and their unmounts. Reading the mount table (mount.Interface's List and
// IsMountPoint) needs no program and stays with mount-utils.
type mountCalls interface {
	// mountTmpfs mounts a tmpfs on dir with the given options ("size=N", "noswap").
	mountTmpfs(dir string, options []string) error
	// bindDescriptor bind-mounts the file or directory open as fd onto target.
	bindDescriptor(fd int, target string) error
	// unmount takes away the mount at path (teardown).
	unmount(path string) error
	// unbind detaches the mount at target at once (a stale subPath bind).
	unbind(target string) error
}

// syscallMounts calls mount(2) and umount(2) itself, through golang.org/x/sys/unix, and never
// runs a mount program. Two reasons:
//
//   - vk-cri's image holds its static binary and nothing else (hack/tools/image): there is no
//     /bin/mount or /bin/umount to run, so mount-utils' Mounter (which executes them) fails every
//     tmpfs volume (each pod's service-account token, secrets, projected and downwardAPI volumes,
//     memory emptyDirs) and every teardown with FailedMount under the chart.
//   - subPaths: util-linux's mount canonicalises its source (realpath) before mount(2), turning
//     the checked descriptor "/proc/self/fd/N" back into a path that is walked again, which is
//     the race of CVE-2021-25741 (the kubelet passes it --no-canonicalize,
//     pkg/volume/util/subpath/subpath_linux.go). mount(2) of the magic link mounts the very file
//     the descriptor holds, whatever its path has become meanwhile.
type syscallMounts struct{}

// mountTmpfs mounts with no flags and the options as data, as `mount -t tmpfs -o OPTS tmpfs DIR`
// does (the kubelet's emptyDir medium Memory, pkg/volume/emptydir/empty_dir.go).
func (syscallMounts) mountTmpfs(dir string, options []string) error {
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, strings.Join(options, ",")); err != nil {
		return fmt.Errorf("mount(2) of a tmpfs on %s (options %q): %w", dir, options, err)
	}
	return nil
}

func (syscallMounts) bindDescriptor(fd int, target string) error {
	source := descriptorPath("self", fd)
	if err := unix.Mount(source, target, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind-mounting %s (the checked subPath) on %s: %w", source, target, err)
	}
	return nil
}

// unmount is a plain umount(2), as the kubelet's teardown (mount-utils' Unmount without force):
// a mount still busy is an error the next teardown retries. A path no longer mounted (EINVAL)
// is done already.
func (syscallMounts) unmount(path string) error {
	err := unix.Unmount(path, 0)
	if err == nil || errors.Is(err, unix.EINVAL) {
		return nil
	}
	return fmt.Errorf("umount(2) of %s: %w", path, err)
}

// unbind detaches the mount at target at once (MNT_DETACH, as the kubelet's lazy unmount of a
// stale subPath): a container still using it keeps it until it exits.
func (syscallMounts) unbind(target string) error {
	if err := unix.Unmount(target, unix.MNT_DETACH); err != nil {
		return fmt.Errorf("unmounting %s: %w", target, err)
	}
	return nil
}

// descriptorPath is fd's magic link under /proc/<pid>.
func descriptorPath(pid string, fd int) string {
	return "/proc/" + pid + "/fd/" + strconv.Itoa(fd)
}

// mounterCalls mounts through a mount.Interface: tests give mount-utils' fake, which records
// what was asked (for a subPath, a descriptor of this process as the source) and mounts nothing.
type mounterCalls struct{ mounter mount.Interface }

func (c mounterCalls) mountTmpfs(dir string, options []string) error {
	return c.mounter.MountSensitiveWithoutSystemd("tmpfs", dir, "tmpfs", options, nil)
}

func (c mounterCalls) bindDescriptor(fd int, target string) error {
	return c.mounter.MountSensitiveWithoutSystemd(descriptorPath(strconv.Itoa(os.Getpid()), fd), target, "", []string{"bind"}, nil)
}

func (c mounterCalls) unmount(path string) error { return c.mounter.Unmount(path) }

func (c mounterCalls) unbind(target string) error { return c.mounter.Unmount(target) }
