// Package golden compares a test's output with a golden file under testdata/, and rewrites the
// file with the current output when the test runs with -update (go test ./pkg -update). It is
// the one definition of that flag: every golden test of the module uses it.
package golden

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ with the current output")

// Updating reports whether the test runs with -update.
func Updating() bool { return *update }

// Check compares got with the golden file at path, or writes got there (creating its directory)
// when the test runs with -update.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	CheckNormalized(t, path, got, nil)
}

// CheckNormalized is Check for output kept in a canonical form (sorted JSON keys ...): the golden
// file's content goes through normalize before it is compared with got, so that a file edited by
// hand compares by meaning. A nil normalize compares the bytes.
func CheckNormalized(t testing.TB, path string, got []byte, normalize func(testing.TB, []byte) []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run with -update to create it): %v", err)
	}
	if normalize != nil {
		want = normalize(t, want)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("output differs from %s (run with -update to accept):\n%s", path, LineDiff(string(want), string(got)))
	}
}

// LineDiff is a minimal line-by-line difference of want and got, enough to spot a changed field.
func LineDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := range max(len(wl), len(gl)) {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			fmt.Fprintf(&b, "line %d:\n- %s\n+ %s\n", i+1, w, g)
		}
	}
	return b.String()
}
