package compare

// Loading scenario files: LoadDir, LoadFile and the FileError they report.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// FileError is everything wrong with one scenario file.
type FileError struct {
	File   string
	Errors []string // "field: problem"
}

func (e *FileError) Error() string {
	if len(e.Errors) == 1 {
		return e.File + ": " + e.Errors[0]
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d problems:", e.File, len(e.Errors))
	for _, m := range e.Errors {
		b.WriteString("\n  " + m)
	}
	return b.String()
}

// LoadDir loads every *.yaml and *.yml file under dir, recursively (directories and files whose
// name starts with "." or "_" are skipped), and checks that scenario names are unique. The
// scenarios come sorted by category, then name. All problems of all files are reported together.
func LoadDir(dir string) ([]*Scenario, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		base := d.Name()
		if path != dir && (strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_")) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() && (strings.HasSuffix(base, ".yaml") || strings.HasSuffix(base, ".yml")) {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("scenarios: %w", err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("scenarios: no *.yaml files under %s", dir)
	}
	sort.Strings(files)
	var (
		out    []*Scenario
		errs   []error
		byName = map[string]string{}
	)
	for _, f := range files {
		s, err := LoadFile(f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if prev, dup := byName[s.Name]; dup {
			errs = append(errs, &FileError{File: f, Errors: []string{fmt.Sprintf("name: %q is already the name of %s", s.Name, prev)}})
			continue
		}
		byName[s.Name] = f
		out = append(out, s)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Category != out[j].Category {
			return out[i].Category < out[j].Category
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// LoadFile reads and validates one scenario file.
func LoadFile(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}
