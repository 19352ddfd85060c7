package volumes

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// The names of the atomic writer layout the kubelet uses, which programs in pods rely on (they
// watch ..data to notice updates).
const (
	dataDirName    = "..data"
	newDataDirName = "..data_tmp"
	tsDirLayout    = "..2006_01_02_15_04_05."
)

const (
	maxFileNameLength = 255
	maxPathLength     = 4096
)

// fileProjection is one file of a volume's payload.
type fileProjection struct {
	Data []byte
	Mode int32
}

// payload maps the paths a volume shows (relative to the volume) to their contents.
type payload map[string]fileProjection

// validatePayloadPath refuses a payload path that could leave the volume or clash with the
// writer's own entries: empty, absolute, with a ".." element, starting with "..", too long.
func validatePayloadPath(p string) error {
	switch {
	case p == "":
		return errors.New("invalid path: must not be empty")
	case filepath.IsAbs(p):
		return fmt.Errorf("invalid path: must be relative path: %s", p)
	case len(p) > maxPathLength:
		return fmt.Errorf("invalid path: must be less than or equal to %d characters", maxPathLength)
	}
	parts := strings.Split(p, "/")
	for _, part := range parts {
		if part == ".." {
			return fmt.Errorf("invalid path: must not contain '..': %s", p)
		}
		if len(part) > maxFileNameLength {
			return fmt.Errorf("invalid path: filenames must be less than or equal to %d characters", maxFileNameLength)
		}
	}
	if strings.HasPrefix(parts[0], "..") {
		return fmt.Errorf("invalid path: must not start with '..': %s", p)
	}
	return nil
}

func cleanPayload(in payload) (payload, error) {
	out := make(payload, len(in))
	for p, f := range in {
		if err := validatePayloadPath(p); err != nil {
			return nil, err
		}
		out[filepath.Clean(p)] = f
	}
	return out, nil
}

// atomicWriter writes a payload into a directory so that a reader never sees a mix of two
// versions: the files live in a timestamped directory, "..data" points to it, each top-level
// name is a symlink through "..data", and an update swaps "..data" with one rename.
type atomicWriter struct {
	dir string
	now func() time.Time
}

func newAtomicWriter(dir string) *atomicWriter {
	return &atomicWriter{dir: dir, now: time.Now}
}

// Write makes the directory show exactly the payload. setPerms, when given, runs on the new
// timestamped directory before it becomes visible. It reports whether anything changed.
func (w *atomicWriter) Write(in payload, setPerms func(tsDir string) error) (bool, error) {
	clean, err := cleanPayload(in)
	if err != nil {
		return false, err
	}
	if _, err := os.Stat(w.dir); err != nil {
		return false, fmt.Errorf("atomic writer target: %w", err)
	}
	dataLink := filepath.Join(w.dir, dataDirName)
	oldTS, err := os.Readlink(dataLink)
	if err != nil && !os.IsNotExist(err) {
		return false, fmt.Errorf("reading %s: %w", dataDirName, err)
	}
	var stale []string
	write := true
	if oldTS != "" {
		oldPath := filepath.Join(w.dir, oldTS)
		if stale, err = stalePaths(clean, oldPath); err != nil {
			return false, err
		}
		if !differs(clean, oldPath) && len(stale) == 0 {
			write = false
		}
	}
	if write {
		ts, err := w.writeTimestampDir(clean, setPerms)
		if err != nil {
			return false, err
		}
		tmpLink := filepath.Join(w.dir, newDataDirName)
		_ = os.Remove(tmpLink)
		if err := os.Symlink(ts, tmpLink); err != nil {
			_ = os.RemoveAll(filepath.Join(w.dir, ts))
			return false, fmt.Errorf("linking the new data directory: %w", err)
		}
		if err := os.Rename(tmpLink, dataLink); err != nil {
			_ = os.Remove(tmpLink)
			_ = os.RemoveAll(filepath.Join(w.dir, ts))
			return false, fmt.Errorf("swapping %s: %w", dataDirName, err)
		}
	}
	if err := w.linkVisible(clean); err != nil {
		return write, err
	}
	for _, p := range stale {
		if strings.Contains(p, "/") {
			continue // removed with the old timestamped directory
		}
		if err := os.Remove(filepath.Join(w.dir, p)); err != nil && !os.IsNotExist(err) {
			return write, fmt.Errorf("removing stale entry %s: %w", p, err)
		}
	}
	if write && oldTS != "" {
		if err := os.RemoveAll(filepath.Join(w.dir, oldTS)); err != nil {
			return write, fmt.Errorf("removing the old data directory: %w", err)
		}
	}
	return write, nil
}

// differs reports whether any file of the payload is missing from, or different in, dir. Modes
// are not compared: ownership settings add group bits after the write.
func differs(p payload, dir string) bool {
	for name, f := range p {
		fi, err := os.Lstat(filepath.Join(dir, name))
		if err != nil || !fi.Mode().IsRegular() {
			return true
		}
		cur, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.Equal(cur, f.Data) {
			return true
		}
	}
	return false
}

// stalePaths lists the paths under the old data directory that the new payload no longer has.
func stalePaths(p payload, oldDir string) ([]string, error) {
	keep := map[string]bool{}
	for name := range p {
		for d := name; d != "." && d != "/"; d = filepath.Dir(d) {
			keep[d] = true
		}
	}
	var out []string
	err := filepath.Walk(oldDir, func(path string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(oldDir, path)
		if rel != "." && !keep[rel] {
			out = append(out, rel)
		}
		return nil
	})
	if os.IsNotExist(err) {
		return nil, nil
	}
	sort.Strings(out)
	return out, err
}

func (w *atomicWriter) writeTimestampDir(p payload, setPerms func(string) error) (string, error) {
	ts, err := os.MkdirTemp(w.dir, w.now().UTC().Format(tsDirLayout))
	if err != nil {
		return "", fmt.Errorf("creating the data directory: %w", err)
	}
	if err := os.Chmod(ts, 0o755); err != nil {
		return "", err
	}
	fail := func(err error) (string, error) {
		_ = os.RemoveAll(ts)
		return "", err
	}
	for name, f := range p {
		full := filepath.Join(ts, name)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return fail(fmt.Errorf("creating directory of %s: %w", name, err))
		}
		mode := os.FileMode(f.Mode).Perm()
		if err := os.WriteFile(full, f.Data, mode); err != nil {
			return fail(fmt.Errorf("writing %s: %w", name, err))
		}
		// The umask applies to WriteFile's mode; the payload's mode is exact.
		if err := os.Chmod(full, mode); err != nil {
			return fail(err)
		}
	}
	if setPerms != nil {
		if err := setPerms(ts); err != nil {
			return fail(fmt.Errorf("applying ownership: %w", err))
		}
	}
	return filepath.Base(ts), nil
}

// linkVisible creates the user-visible symlink of each top-level name through ..data.
func (w *atomicWriter) linkVisible(p payload) error {
	for name := range p {
		top, _, _ := strings.Cut(name, "/")
		link := filepath.Join(w.dir, top)
		if _, err := os.Readlink(link); err == nil {
			continue
		} else if !os.IsNotExist(err) {
			return fmt.Errorf("entry %s is not the writer's: %w", top, err)
		}
		if err := os.Symlink(filepath.Join(dataDirName, top), link); err != nil {
			return fmt.Errorf("linking %s: %w", top, err)
		}
	}
	return nil
}
