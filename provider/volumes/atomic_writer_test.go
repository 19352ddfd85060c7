package volumes

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/vk-cri/vk-cri/internal/golden"
)

// tree describes a directory for golden comparison: each entry with its type, mode and link
// target, timestamped directory names replaced by a stable placeholder.
func tree(t *testing.T, dir string) string {
	t.Helper()
	ts, _ := os.Readlink(filepath.Join(dir, dataDirName))
	var lines []string
	err := filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if rel == "." {
			return nil
		}
		name := strings.ReplaceAll(rel, ts, "<ts>")
		switch {
		case info.Mode()&os.ModeSymlink != 0:
			target, _ := os.Readlink(path)
			lines = append(lines, fmt.Sprintf("%s -> %s", name, strings.ReplaceAll(target, ts, "<ts>")))
		case info.IsDir():
			lines = append(lines, fmt.Sprintf("%s/ %o", name, info.Mode().Perm()))
		default:
			data, _ := os.ReadFile(path)
			lines = append(lines, fmt.Sprintf("%s %o %q", name, info.Mode().Perm(), data))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n"
}

func TestAtomicWriterLayoutAndUpdate(t *testing.T) {
	dir := t.TempDir()
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	w := &atomicWriter{dir: dir, now: func() time.Time { return clock }}

	first := payload{
		"app.conf":           {Data: []byte("listen = 8080"), Mode: 0o644},
		"nested/deep/motd":   {Data: []byte("hello"), Mode: 0o400},
		"to-be-removed.conf": {Data: []byte("old"), Mode: 0o644},
	}
	changed, err := w.Write(first, nil)
	if err != nil || !changed {
		t.Fatalf("first write: changed=%v err=%v", changed, err)
	}
	golden.Check(t, filepath.Join("testdata", "atomic_writer_first.golden"), []byte(tree(t, dir)))
	oldTS, _ := os.Readlink(filepath.Join(dir, dataDirName))
	if !strings.HasPrefix(oldTS, "..2026_01_02_03_04_05.") {
		t.Errorf("timestamped directory %q does not carry the write time", oldTS)
	}

	// The same payload again changes nothing, not even the data directory.
	if changed, err := w.Write(first, nil); err != nil || changed {
		t.Fatalf("unchanged write: changed=%v err=%v", changed, err)
	}
	if ts, _ := os.Readlink(filepath.Join(dir, dataDirName)); ts != oldTS {
		t.Errorf("an unchanged payload swapped the data directory: %s -> %s", oldTS, ts)
	}

	second := payload{
		"app.conf":         {Data: []byte("listen = 9090"), Mode: 0o644},
		"nested/deep/motd": {Data: []byte("hello"), Mode: 0o400},
	}
	if changed, err := w.Write(second, nil); err != nil || !changed {
		t.Fatalf("second write: changed=%v err=%v", changed, err)
	}
	newTS, _ := os.Readlink(filepath.Join(dir, dataDirName))
	if newTS == oldTS {
		t.Fatal("an update reused the old data directory")
	}
	if _, err := os.Lstat(filepath.Join(dir, oldTS)); !os.IsNotExist(err) {
		t.Errorf("old data directory still there: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, newDataDirName)); !os.IsNotExist(err) {
		t.Errorf("temporary link left behind: %v", err)
	}
	golden.Check(t, filepath.Join("testdata", "atomic_writer_second.golden"), []byte(tree(t, dir)))
}

func TestAtomicWriterSetPermsRunsBeforeSwap(t *testing.T) {
	dir := t.TempDir()
	w := newAtomicWriter(dir)
	var sawLink bool
	_, err := w.Write(payload{"k": {Data: []byte("v"), Mode: 0o644}}, func(ts string) error {
		_, err := os.Lstat(filepath.Join(dir, dataDirName))
		sawLink = err == nil
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if sawLink {
		t.Error("setPerms ran after the data directory became visible")
	}
}

func TestAtomicWriterRefusesHostilePaths(t *testing.T) {
	for _, p := range []string{
		"", "/etc/passwd", "../escape", "a/../../escape", "a/b/../../..", "..data", "..data/x",
		"..2026_01_01", strings.Repeat("x", 256), strings.Repeat("a/", 2049) + "b",
	} {
		t.Run(fmt.Sprintf("%.30q", p), func(t *testing.T) {
			dir := t.TempDir()
			outside := t.TempDir()
			w := newAtomicWriter(dir)
			if _, err := w.Write(payload{p: {Data: []byte("x"), Mode: 0o644}}, nil); err == nil {
				t.Fatalf("path %q accepted", p)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 0 {
				t.Errorf("refused payload left entries in the volume: %v", entries)
			}
			if entries, _ := os.ReadDir(outside); len(entries) != 0 {
				t.Errorf("refused payload wrote outside: %v", entries)
			}
		})
	}
}

func TestAtomicWriterDotsInsideNamesAreFine(t *testing.T) {
	dir := t.TempDir()
	w := newAtomicWriter(dir)
	p := payload{"a..b": {Data: []byte("1"), Mode: 0o644}, "dir/..hidden": {Data: []byte("2"), Mode: 0o644}, ".env": {Data: []byte("3"), Mode: 0o644}}
	if _, err := w.Write(p, nil); err != nil {
		t.Fatal(err)
	}
	for name, f := range p {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(got) != string(f.Data) {
			t.Errorf("%s: %q %v", name, got, err)
		}
	}
}
