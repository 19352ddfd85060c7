package volumes

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/mount-utils"
)

// inPrivateMountNamespace runs f on an OS thread of its own in a new mount namespace whose
// mounts propagate nowhere, so that a test can mount for real without touching the node's mount
// table. The thread is never handed back to the Go scheduler: it ends with f, and its namespace
// with it. Needs root.
func inPrivateMountNamespace(t *testing.T, f func() error) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting needs root")
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with this goroutine
		if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
			errc <- skipError{err}
			return
		}
		if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
			errc <- skipError{err}
			return
		}
		errc <- f()
	}()
	err := <-errc
	var skip skipError
	if errors.As(err, &skip) {
		t.Skipf("no private mount namespace here: %v", skip.error)
	}
	if err != nil {
		t.Fatal(err)
	}
}

type skipError struct{ error }

// hostileSwap prepares what a container racing the kubelet leaves behind: the subPath
// directory "sub" of vol is opened (checked), then removed and replaced under the name its
// descriptor now reads back as ("sub (deleted)") by a symlink to outside. Whoever turns the
// descriptor back into a path (util-linux's mount canonicalising its source) walks that symlink
// out of the volume; mount(2) of the descriptor binds the checked directory. Descriptors must be
// opened in the mount namespace that mounts them.
func hostileSwap(vol, outside string) (int, error) {
	if err := os.Mkdir(filepath.Join(vol, "sub"), 0o755); err != nil {
		return -1, err
	}
	fd, err := openBeneath(vol, "sub")
	if err != nil {
		return -1, err
	}
	if err := os.Remove(filepath.Join(vol, "sub")); err != nil {
		unix.Close(fd)
		return -1, err
	}
	link, err := os.Readlink(descriptorPath("self", fd))
	if err == nil {
		err = os.Symlink(outside, link)
	}
	if err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// mkdirs makes each directory.
func mkdirs(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.Mkdir(d, 0o750); err != nil {
			t.Fatal(err)
		}
	}
}

// The subPath bind mounts the descriptor that was checked, never what its path leads to by the
// time of the mount.
func TestSyscallBinderMountsTheCheckedDescriptor(t *testing.T) {
	vol, outside := hostileVolume(t)
	if err := os.WriteFile(filepath.Join(vol, "inside", "mine"), []byte("volume data"), 0o644); err != nil {
		t.Fatal(err)
	}
	targets := t.TempDir()
	goodTarget, swappedTarget := filepath.Join(targets, "good"), filepath.Join(targets, "swapped")
	mkdirs(t, goodTarget, swappedTarget)
	inPrivateMountNamespace(t, func() error {
		var b syscallMounts
		good, err := openBeneath(vol, "inside")
		if err != nil {
			return err
		}
		defer unix.Close(good)
		if err := b.bindDescriptor(good, goodTarget); err != nil {
			return err
		}
		defer unix.Unmount(goodTarget, unix.MNT_DETACH)
		if data, err := os.ReadFile(filepath.Join(goodTarget, "mine")); err != nil || string(data) != "volume data" {
			t.Errorf("bound subPath: %q %v, want the volume's file", data, err)
		}

		swapped, err := hostileSwap(vol, outside)
		if err != nil {
			return err
		}
		defer unix.Close(swapped)
		if err := b.bindDescriptor(swapped, swappedTarget); err != nil {
			// Refusing is safe too; binding the host is not.
			t.Logf("binding a removed subPath: %v", err)
		} else {
			defer unix.Unmount(swappedTarget, unix.MNT_DETACH)
		}
		if _, err := os.Stat(filepath.Join(swappedTarget, "secret")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the subPath bind shows a file outside the volume (%v): the descriptor was turned back into a path", err)
		}
		return nil
	})
}

// The same swap through the mount program, as vk-cri bound subPaths before: it shows what the
// test above guards against (and that the swap is a real escape, so that test can fail). It
// needs util-linux's mount; a mount program that does not follow the swap only logs.
func TestMountProgramFollowsASwappedSubPath(t *testing.T) {
	if _, err := os.Stat("/bin/mount"); err != nil {
		t.Skip("no mount program")
	}
	vol, outside := hostileVolume(t)
	target := filepath.Join(t.TempDir(), "swapped")
	mkdirs(t, target)
	inPrivateMountNamespace(t, func() error {
		swapped, err := hostileSwap(vol, outside)
		if err != nil {
			return err
		}
		defer unix.Close(swapped)
		b := mounterCalls{mounter: mount.NewWithoutSystemd("")}
		if err := b.bindDescriptor(swapped, target); err != nil {
			t.Logf("the mount program refused: %v", err)
			return nil
		}
		defer unix.Unmount(target, unix.MNT_DETACH)
		if _, err := os.Stat(filepath.Join(target, "secret")); err != nil {
			t.Logf("this mount program did not follow the swapped path (%v)", err)
			return nil
		}
		t.Log("the mount program bound the directory outside the volume: canonicalising the descriptor reopens the race")
		return nil
	})
}

// A node's manager binds subPaths with mount(2), not through the mount program; only a mounter
// given by a test replaces it.
func TestManagerBindsSubPathsWithTheSyscall(t *testing.T) {
	if _, ok := New(t.TempDir()).calls.(syscallMounts); !ok {
		t.Error("the default manager does not bind subPaths with mount(2)")
	}
	fake := mount.NewFakeMounter(nil)
	if b, ok := New(t.TempDir(), WithMounter(fake)).calls.(mounterCalls); !ok || b.mounter != fake {
		t.Error("WithMounter does not bind subPaths through the given mounter")
	}
}

// mountsAt counts the mounts at path in the calling thread's mount namespace.
func mountsAt(path string) (int, error) {
	b, err := os.ReadFile("/proc/thread-self/mountinfo")
	if err != nil {
		return 0, err
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[4] == path {
			n++
		}
	}
	return n, nil
}

// A restarted container's subPath target is reused while it shows the subPath; once the
// subPath was replaced in the volume (here: removed and made again, as the swap race of
// TestVolumeSubPathSwapRace left it), the stale bind, which no runtime can mount any more, is
// taken away and the new directory bound, as the kubelet does. The mount table, not a device
// comparison, tells that the target is mounted: the bind comes from the same file system.
func TestPrepareSubPathRebindsAReplacedSubPath(t *testing.T) {
	vol, root := t.TempDir(), t.TempDir()
	sub := filepath.Join(vol, "a")
	write := func(name string) error {
		if err := os.MkdirAll(sub, 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(sub, name), []byte(name), 0o644)
	}
	if err := write("old"); err != nil {
		t.Fatal(err)
	}
	inPrivateMountNamespace(t, func() error {
		m := New(root)
		target, err := m.prepareSubPath("pod-1", "data", vol, "a", "c", 0)
		if err != nil {
			return err
		}
		defer func() {
			for n, _ := mountsAt(target); n > 0; n, _ = mountsAt(target) {
				if unix.Unmount(target, unix.MNT_DETACH) != nil {
					return
				}
			}
		}()
		if _, err := m.prepareSubPath("pod-1", "data", vol, "a", "c", 0); err != nil {
			return err
		}
		if n, err := mountsAt(target); err != nil || n != 1 {
			t.Errorf("after a restart with the subPath unchanged: %d mounts at the target (%v), want the one reused", n, err)
		}

		if err := os.RemoveAll(sub); err != nil {
			return err
		}
		if err := write("new"); err != nil {
			return err
		}
		if _, err := m.prepareSubPath("pod-1", "data", vol, "a", "c", 0); err != nil {
			return err
		}
		if _, err := os.Stat(filepath.Join(target, "new")); err != nil {
			t.Errorf("after the subPath was replaced the target does not show it: %v", err)
		}
		if n, err := mountsAt(target); err != nil || n != 1 {
			t.Errorf("after the subPath was replaced: %d mounts at the target (%v), want the stale one gone", n, err)
		}
		return nil
	})
}

// threadMountTable is the system mounter whose List reads the calling thread's mount table
// (/proc/thread-self/mounts): a test's private namespace belongs to one locked thread, while
// mount-utils reads /proc/mounts, the main thread's.
type threadMountTable struct{ mount.Interface }

func (threadMountTable) List() ([]mount.MountPoint, error) {
	b, err := os.ReadFile("/proc/thread-self/mounts")
	if err != nil {
		return nil, err
	}
	var out []mount.MountPoint
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 4 {
			out = append(out, mount.MountPoint{Device: f[0], Path: f[1], Type: f[2], Opts: strings.Split(f[3], ",")})
		}
	}
	return out, nil
}

// tmpfsOptionsAt is the super-block options of the tmpfs mounted at path in the calling
// thread's mount namespace ("" when none is).
func tmpfsOptionsAt(path string) (string, error) {
	b, err := os.ReadFile("/proc/thread-self/mountinfo")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if ok && len(f) > 4 && f[4] == path && len(g) >= 3 && g[0] == "tmpfs" {
			return g[2], nil
		}
	}
	return "", nil
}

// With no mount program to be found (an empty PATH, as in vk-cri's image), a pod's memory
// emptyDir (sized by its sizeLimit) and secret volume are mounted with mount(2) and taken away
// by TearDown with umount(2), leaving nothing mounted and no directory.
func TestTmpfsVolumesMountAndTearDownWithoutAProgram(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	client, _ := tokenClient(&v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns"}, Data: map[string][]byte{"k": []byte("v")}})
	root := t.TempDir()
	limit := resource.MustParse("8Mi")
	pod := testPod(
		v1.Volume{Name: "s", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "s"}}},
		v1.Volume{Name: "mem", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory, SizeLimit: &limit}}},
	)
	inPrivateMountNamespace(t, func() error {
		m := New(root, WithClient(client))
		if _, ok := m.calls.(syscallMounts); !ok {
			return errors.New("the default manager does not mount with mount(2)")
		}
		m.mounter = threadMountTable{m.mounter}
		if errs := m.SetUp(context.Background(), pod).errs(); len(errs) != 0 {
			return fmt.Errorf("set up: %v", errs)
		}
		memDir := m.layout.volumeDir(pod.UID, pluginEmptyDir, "mem")
		opts, err := tmpfsOptionsAt(memDir)
		if err != nil {
			return err
		}
		if !strings.Contains(opts, "size=8192k") {
			t.Errorf("memory emptyDir: tmpfs options %q, want size=8192k (its sizeLimit)", opts)
		}
		secretDir := m.layout.volumeDir(pod.UID, pluginSecret, "s")
		if opts, _ := tmpfsOptionsAt(secretDir); opts == "" {
			t.Errorf("secret volume %s: no tmpfs mounted", secretDir)
		}
		if b, err := os.ReadFile(filepath.Join(secretDir, "k")); err != nil || string(b) != "v" {
			t.Errorf("secret file: %q %v", b, err)
		}
		if err := m.TearDown(pod.UID); err != nil {
			return fmt.Errorf("tear down: %w", err)
		}
		for _, d := range []string{memDir, secretDir} {
			if opts, _ := tmpfsOptionsAt(d); opts != "" {
				t.Errorf("%s still mounted after TearDown", d)
			}
		}
		if _, err := os.Stat(m.layout.podDir(pod.UID)); !os.IsNotExist(err) {
			t.Errorf("pod directory left: %v", err)
		}
		return nil
	})
}
