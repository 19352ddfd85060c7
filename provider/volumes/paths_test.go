package volumes

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

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
