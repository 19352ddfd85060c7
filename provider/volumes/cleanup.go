package volumes

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// TearDown unmounts everything the pod had mounted under its directory (subPath binds first,
// then tmpfs volumes) and removes the directory. The directory is removed only once no mount is
// left in it, so that a failed unmount never deletes what a mount shows.
func (m *Manager) TearDown(uid types.UID) error {
	dir := m.layout.podDir(uid)
	if _, err := os.Lstat(dir); os.IsNotExist(err) {
		m.store.forget(uid)
		return nil
	}
	if err := m.unmountUnder(dir); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("removing pod directory: %w", err)
	}
	m.store.forget(uid)
	return nil
}

// unmountUnder unmounts every mount point below dir, deepest first, and checks none is left.
func (m *Manager) unmountUnder(dir string) error {
	points, err := m.mountsUnder(dir)
	if err != nil {
		return err
	}
	for _, p := range points {
		if err := m.calls.unmount(p); err != nil {
			return fmt.Errorf("unmounting %s: %w", p, err)
		}
	}
	left, err := m.mountsUnder(dir)
	if err != nil {
		return err
	}
	if len(left) > 0 {
		return fmt.Errorf("mounts left under %s: %v", dir, left)
	}
	return nil
}

func (m *Manager) mountsUnder(dir string) ([]string, error) {
	list, err := m.mounter.List()
	if err != nil {
		return nil, fmt.Errorf("listing mounts: %w", err)
	}
	prefix := filepath.Clean(dir) + "/"
	var out []string
	for _, mp := range list {
		if strings.HasPrefix(mp.Path, prefix) {
			out = append(out, mp.Path)
		}
	}
	// Deeper paths first; a path mounted twice is listed twice and unmounted twice.
	sort.SliceStable(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out, nil
}

// CleanupOrphans tears down the directories of pods that are not live (after a restart of
// vk-cri: pods deleted while it was down). Live pods' directories are not touched.
func (m *Manager) CleanupOrphans(live func(types.UID) bool) (removed []types.UID, err error) {
	entries, err := os.ReadDir(m.layout.podsDir())
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, e := range entries {
		uid := types.UID(e.Name())
		if !e.IsDir() || live(uid) {
			continue
		}
		if err := m.TearDown(uid); err != nil {
			errs = append(errs, fmt.Errorf("pod %s: %w", uid, err))
			continue
		}
		removed = append(removed, uid)
	}
	if len(errs) > 0 {
		return removed, fmt.Errorf("cleaning orphaned pod directories: %v", errs)
	}
	return removed, nil
}
