package golden

import (
	"os"
	"path/filepath"
	"testing"
)

func TestLineDiffNamesTheChangedLines(t *testing.T) {
	got := LineDiff("a\nb\nc", "a\nB\nc\nd")
	want := "line 2:\n- b\n+ B\nline 4:\n- \n+ d\n"
	if got != want {
		t.Errorf("LineDiff = %q, want %q", got, want)
	}
}

// recorder is a testing.TB that records failures instead of failing the test.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true }
func (r *recorder) Helper()               {}

func TestCheckComparesWithTheGoldenFile(t *testing.T) {
	if Updating() {
		t.Skip("-update rewrites golden files instead of comparing")
	}
	path := filepath.Join(t.TempDir(), "out.golden")
	if err := os.WriteFile(path, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	same := &recorder{TB: t}
	Check(same, path, []byte("one\n"))
	differs := &recorder{TB: t}
	Check(differs, path, []byte("two\n"))
	normalized := &recorder{TB: t}
	CheckNormalized(normalized, path, []byte("ONE\n"), func(_ testing.TB, b []byte) []byte { return []byte("ONE\n") })
	if same.failed || !differs.failed || normalized.failed {
		t.Errorf("failed: same output %v, other output %v, normalized golden %v; want false, true, false", same.failed, differs.failed, normalized.failed)
	}
}
