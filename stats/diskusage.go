package stats

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// usage is the space and inodes a directory tree takes, counted as du does: allocated blocks,
// each hard-linked inode once.
type usage struct {
	Bytes  uint64
	Inodes uint64
}

// diskUsage walks dir. A missing dir is zero usage with os.ErrNotExist; files vanishing during
// the walk are skipped.
func diskUsage(dir string) (usage, error) {
	var u usage
	seen := map[uint64]struct{}{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p != dir {
				return nil
			}
			return err
		}
		info, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		st, ok := info.Sys().(*syscall.Stat_t)
		if !ok {
			u.Bytes += uint64(info.Size())
			u.Inodes++
			return nil
		}
		if st.Nlink > 1 {
			if _, dup := seen[st.Ino]; dup {
				return nil
			}
			seen[st.Ino] = struct{}{}
		}
		u.Bytes += uint64(st.Blocks) * 512
		u.Inodes++
		return nil
	})
	if err != nil && errors.Is(err, os.ErrNotExist) {
		return usage{}, err
	}
	return u, err
}
