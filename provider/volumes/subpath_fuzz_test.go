package volumes

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// FuzzSubPath resolves fuzzed subPaths (and subPathExprs) in a volume holding the symlinks of
// hostileVolume plus one fuzzed link, and checks the one property that matters: whatever is
// opened or created lies inside the volume. Seeds: testdata/fuzz/FuzzSubPath.
func FuzzSubPath(f *testing.F) {
	f.Fuzz(func(t *testing.T, sub, linkTarget, env string) {
		if strings.ContainsRune(sub, 0) || strings.ContainsRune(linkTarget, 0) || len(sub) > 512 || len(linkTarget) > 512 {
			return
		}
		vol, outside := hostileVolume(t)
		if linkTarget != "" {
			if err := os.Symlink(linkTarget, filepath.Join(vol, "fuzzed")); err != nil {
				t.Fatal(err)
			}
		}
		// A subPathExpr: $(E) is the fuzzed value.
		if expanded, err := ExpandSubPath(sub, map[string]string{"E": env}); err == nil {
			sub = expanded
		}
		if strings.ContainsRune(sub, 0) || sub == "" {
			return
		}
		if err := validateSubPath(sub); err != nil {
			if !filepath.IsAbs(sub) && !strings.Contains("/"+sub+"/", "/../") {
				t.Fatalf("validateSubPath(%q) refused a relative path without '..': %v", sub, err)
			}
			return
		}
		realVol, err := filepath.EvalSymlinks(vol)
		if err != nil {
			t.Fatal(err)
		}
		inside := func(what string, fd int) {
			p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
			if err != nil {
				t.Fatal(err)
			}
			if p != realVol && !strings.HasPrefix(p, realVol+"/") {
				t.Fatalf("%s(%q) opened %s, outside the volume %s (link -> %q)", what, sub, p, realVol, linkTarget)
			}
		}
		if fd, err := openResolvedBeneath(vol, sub); err == nil {
			inside("openResolvedBeneath", fd)
			unix.Close(fd)
		}
		if fd, err := openBeneath(vol, sub); err == nil {
			inside("openBeneath", fd)
			unix.Close(fd)
		}
		if err := makeDirBeneath(vol, sub, 0o755); err == nil {
			fd, err := openResolvedBeneath(vol, sub)
			if err == nil {
				inside("makeDirBeneath then open", fd)
				unix.Close(fd)
			}
		}
		entries, err := os.ReadDir(outside)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 1 {
			t.Fatalf("subPath %q (link -> %q) created something outside the volume: %v", sub, linkTarget, entries)
		}
	})
}
