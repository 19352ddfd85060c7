package volumes

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/mount-utils"
)

func TestValidateSubPath(t *testing.T) {
	for sub, ok := range map[string]bool{
		"a": true, "a/b": true, "a..b": true, "..a": true, ".": true,
		"/abs": false, "..": false, "a/../b": false, "a/..": false, "../a": false,
	} {
		if err := validateSubPath(sub); (err == nil) != ok {
			t.Errorf("validateSubPath(%q) = %v, want ok=%v", sub, err, ok)
		}
	}
}

// hostileVolume builds a volume with symlinks planted as a container could: out -> /, up ->
// ../.., abs -> an absolute path outside, in -> a directory inside, loop -> itself.
func hostileVolume(t *testing.T) (vol, outside string) {
	t.Helper()
	root := t.TempDir()
	vol = filepath.Join(root, "vol")
	outside = filepath.Join(root, "outside")
	for _, d := range []string{filepath.Join(vol, "inside", "deep"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("host data"), 0o600); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"out":         "/",
		"up":          "../outside",
		"abs":         outside,
		"in":          "inside",
		"loop":        "loop",
		"inside/back": "../../outside",
		"inside/ok":   "deep",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(vol, name)); err != nil {
			t.Fatal(err)
		}
	}
	return vol, outside
}

func TestOpenBeneathRefusesEscapes(t *testing.T) {
	vol, _ := hostileVolume(t)
	for sub, wantErr := range map[string]error{
		"inside":           nil,
		"inside/deep":      nil,
		"in/deep":          nil,
		"inside/ok":        nil,
		"out":              unix.EXDEV,
		"out/etc":          unix.EXDEV,
		"up":               unix.EXDEV,
		"up/secret":        unix.EXDEV,
		"abs/secret":       unix.EXDEV,
		"inside/back":      unix.EXDEV,
		"in/back/secret":   unix.EXDEV,
		"inside/../../etc": unix.EXDEV,
		"loop":             unix.ELOOP,
		"missing":          unix.ENOENT,
	} {
		fd, err := openBeneath(vol, sub)
		if err == nil {
			unix.Close(fd)
		}
		if !errors.Is(err, wantErr) && !(wantErr == nil && err == nil) {
			t.Errorf("openBeneath(%q) = %v, want %v", sub, err, wantErr)
		}
	}
}

func TestMakeDirBeneathNeverCreatesOutside(t *testing.T) {
	vol, outside := hostileVolume(t)
	if err := makeDirBeneath(vol, "new/a/b", 0o750); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(vol, "new/a/b"))
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o750 {
		t.Fatalf("new/a/b: %v %v", fi, err)
	}
	for _, sub := range []string{"up/planted", "abs/planted", "out/tmp/planted-by-test", "inside/back/planted"} {
		if err := makeDirBeneath(vol, sub, 0o755); err == nil {
			t.Errorf("makeDirBeneath(%q) followed a symlink out of the volume", sub)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "planted")); !os.IsNotExist(err) {
		t.Errorf("a directory was created outside the volume: %v", err)
	}
	if _, err := os.Stat("/tmp/planted-by-test"); !os.IsNotExist(err) {
		t.Errorf("a directory was created on the host: %v", err)
	}
}

func TestPrepareSubPathBindsWhatWasChecked(t *testing.T) {
	vol, _ := hostileVolume(t)
	fake := mount.NewFakeMounter(nil)
	m := New(t.TempDir(), WithMounter(fake))
	uid := types.UID("pod-1")

	target, err := m.prepareSubPath(uid, "data", vol, "in/deep", "c", 2)
	if err != nil {
		t.Fatal(err)
	}
	if want := m.layout.subPathTarget(uid, "data", "c", 2); target != want {
		t.Errorf("target %s, want %s", target, want)
	}
	if len(fake.MountPoints) != 1 || fake.MountPoints[0].Path != target {
		t.Fatalf("mounts: %+v", fake.MountPoints)
	}
	if dev := fake.MountPoints[0].Device; filepath.Dir(dev) != filepath.Join("/proc", strconv.Itoa(os.Getpid()), "fd") {
		t.Errorf("bind source %s is not the checked descriptor", dev)
	}

	for _, sub := range []string{"out", "up/secret", "abs", "inside/back", "in/back/secret"} {
		_, err := m.prepareSubPath(uid, "data", vol, sub, "c", 3)
		var esc *EscapeError
		if !errors.As(err, &esc) {
			t.Errorf("subPath %q: %v, want an EscapeError", sub, err)
		}
	}
	if len(fake.MountPoints) != 1 {
		t.Errorf("escaping subPaths were mounted: %+v", fake.MountPoints)
	}

	// A missing subPath is created inside the volume with the volume's mode.
	if err := os.Chmod(vol, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := m.prepareSubPath(uid, "data", vol, "fresh/dir", "c", 4); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(vol, "fresh/dir")); err != nil || fi.Mode().Perm() != 0o777 {
		t.Errorf("created subPath: %v %v", fi, err)
	}
}

func TestKernelMode(t *testing.T) {
	for _, tc := range []struct {
		in   os.FileMode
		want uint32
	}{
		{0o755, 0o755},
		{0o777 | os.ModeSetgid, 0o2777},
		{0o777 | os.ModeSetgid | os.ModeSticky, 0o3777},
		{0o750 | os.ModeSetuid | os.ModeDir, 0o4750},
	} {
		if got := kernelMode(tc.in); got != tc.want {
			t.Errorf("kernelMode(%v) = %#o, want %#o", tc.in, got, tc.want)
		}
	}
}

// A missing subPath of an fsGroup volume on tmpfs gets the volume's whole mode (setgid and
// sticky included) and, created in a setgid directory, the volume's group, as with the kubelet:
// the NodeConformance spec reads "dgtrwxrwxrwx", owner 0, group the fsGroup.
func TestPrepareSubPathKeepsTheVolumesSpecialBits(t *testing.T) {
	vol := t.TempDir()
	const gid = 123
	if err := os.Chmod(vol, 0o777|os.ModeSetgid|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	root := os.Geteuid() == 0
	if root {
		if err := os.Lchown(vol, -1, gid); err != nil {
			t.Fatal(err)
		}
	}
	m := New(t.TempDir(), WithMounter(mount.NewFakeMounter(nil)))
	if _, err := m.prepareSubPath("pod-1", "data", vol, "test-sub", "c", 0); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(vol, "test-sub"))
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().String(); got != "dgtrwxrwxrwx" {
		t.Errorf("subPath directory mode %s, want dgtrwxrwxrwx", got)
	}
	if st := fi.Sys().(*syscall.Stat_t); root && st.Gid != gid {
		t.Errorf("subPath directory group %d, want %d", st.Gid, gid)
	}
}

// swapper keeps replacing vol/name by a directory holding "file" and by a symlink to outside
// (which holds its own "file"), as a container racing the node does, until stop is closed.
func swapper(t *testing.T, vol, name, outside string, stop <-chan struct{}) <-chan struct{} {
	t.Helper()
	done := make(chan struct{})
	p := filepath.Join(vol, name)
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			_ = os.RemoveAll(p)
			if i%2 == 0 {
				// The directory appears whole, file included.
				tmp := p + ".new"
				_ = os.RemoveAll(tmp)
				if os.Mkdir(tmp, 0o755) == nil && os.WriteFile(filepath.Join(tmp, "file"), []byte("volume"), 0o644) == nil {
					_ = os.Rename(tmp, p)
				}
			} else {
				_ = os.Symlink(outside, p)
			}
		}
	}()
	return done
}

// Under a racing swap of a directory and a symlink out of the volume, the walk opens the
// volume's file or fails; it never opens the outside one, and never creates anything outside.
func TestSafeWalkUnderARacingSwap(t *testing.T) {
	vol, outside := hostileVolume(t)
	if err := os.WriteFile(filepath.Join(outside, "file"), []byte("host"), 0o644); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	openRace := swapper(t, vol, "x", outside, stop)
	mkdirRace := swapper(t, vol, "y", outside, stop)
	stopSwapping := sync.OnceFunc(func() {
		close(stop)
		<-openRace
		<-mkdirRace
	})
	defer stopSwapping()
	// Until both sides of the swap were met often enough, or the deadline passes.
	const enough = 100
	deadline := time.Now().Add(30 * time.Second)
	inside, refused := 0, 0
	for i := 0; (inside < enough || refused < enough) && time.Now().Before(deadline); i++ {
		fd, err := openBeneath(vol, "x/file")
		if err == nil {
			data, rerr := os.ReadFile(descriptorPath("self", fd))
			unix.Close(fd)
			if rerr == nil && string(data) != "volume" {
				t.Fatalf("attempt %d opened %q: a file outside the volume", i, data)
			}
			inside++
		} else if errors.Is(err, unix.EXDEV) {
			refused++
		}
		_ = makeDirBeneath(vol, "y/made/here", 0o755)
	}
	stopSwapping()
	if _, err := os.Stat(filepath.Join(outside, "made")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the walk created a directory outside the volume (%v)", err)
	}
	t.Logf("opened inside %d times, refused the symlink %d times", inside, refused)
	if inside < enough || refused < enough {
		t.Errorf("the race never met one side of the swap (inside %d, refused %d)", inside, refused)
	}
}

// A symlink that climbs out of the volume and back into it ("../vol/inside" from the volume's
// root) stays inside once resolved: the kubelet resolves a subPath's symlinks on the host and
// binds it when the result is inside the volume (subpath_linux.go doBindSubPath), so it must
// be bound here too; what leads out for good stays refused.
func TestPrepareSubPathFollowsALinkThatComesBack(t *testing.T) {
	vol, _ := hostileVolume(t)
	for name, target := range map[string]string{
		"back":         "../vol/inside",
		"inside/back2": "../../vol/inside/deep",
		"via-abs":      filepath.Join(vol, "inside"),
	} {
		if err := os.Symlink(target, filepath.Join(vol, name)); err != nil {
			t.Fatal(err)
		}
	}
	fake := mount.NewFakeMounter(nil)
	m := New(t.TempDir(), WithMounter(fake))
	for i, sub := range []string{"back", "back/deep", "inside/back2", "via-abs"} {
		if _, err := m.prepareSubPath("pod-1", "data", vol, sub, "c", i); err != nil {
			t.Errorf("subPath %q: %v, want it bound (it resolves inside the volume)", sub, err)
		}
	}
	for i, sub := range []string{"out", "up/secret", "abs", "inside/back", "loop"} {
		if _, err := m.prepareSubPath("pod-1", "data", vol, sub, "c", 10+i); err == nil {
			t.Errorf("subPath %q was bound", sub)
		}
	}
	if len(fake.MountPoints) != 4 {
		t.Errorf("%d binds, want 4: %+v", len(fake.MountPoints), fake.MountPoints)
	}
}
