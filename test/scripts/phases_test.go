// Package scripts tests hack/ shell helpers that need no stack.
package scripts

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// phases runs hack/phases.sh with its own phase file and stack directories.
func phases(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command("bash", append([]string{"../../hack/phases.sh"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &ee):
		return string(out), ee.ExitCode()
	}
	t.Fatalf("hack/phases.sh %v: %v\n%s", args, err, out)
	return "", 0
}

// make test's phase summary: phases in the order they started, those run inside another one
// (phase_begin/phase_end markers, run_with_progress, phase) indented under it, failures with
// their exit status, which `phases.sh run` passes on.
func TestPhaseSummary(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "out", "phases.tsv")
	env := []string{"VKCRI_PHASES_FILE=" + file, "VKCRI_STACK_DIR=" + filepath.Join(dir, "stack"),
		"VKCRI_CACHE_DIR=" + filepath.Join(dir, "cache"), "VKCRI_PHASE="}
	common, err := filepath.Abs("../../hack/lib/common.sh")
	if err != nil {
		t.Fatal(err)
	}
	inner := filepath.Join(dir, "inner.sh")
	script := "set -euo pipefail\nsource " + common + "\n" +
		"phase_begin 'apt-get install containerd'\ntrue\nphase_end 'apt-get install containerd'\n" +
		"run_with_progress 'building etcd v3.7.3' true 2>/dev/null\n" +
		"phase 'registry' false || true\n"
	if err := os.WriteFile(inner, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}

	if out, rc := phases(t, env, "reset"); rc != 0 {
		t.Fatalf("reset: %d %s", rc, out)
	}
	if out, rc := phases(t, env, "run", "unit tests", "true"); rc != 0 {
		t.Fatalf("run: %d %s", rc, out)
	}
	if out, rc := phases(t, env, "run", "stack up", "bash", inner); rc != 0 {
		t.Fatalf("run stack up: %d %s", rc, out)
	}
	if _, rc := phases(t, env, "run", "e2e tests", "sh", "-c", "exit 3"); rc != 3 {
		t.Errorf("a failing phase's exit status: %d, want 3", rc)
	}
	out, rc := phases(t, env, "summary")
	if rc != 0 {
		t.Fatalf("summary: %d %s", rc, out)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		got = append(got, regexp.MustCompile(`\s+\d+s(  |$)`).ReplaceAllString(strings.TrimRight(l, " "), " N$1"))
	}
	want := []string{
		"  unit tests N",
		"  stack up N",
		"    apt-get install containerd N",
		"    building etcd v3.7.3 N",
		"    registry N  FAILED (exit 1)",
		"  e2e tests N  FAILED (exit 3)",
		"  total of the top-level phases N",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("summary:\n%s\nwant (times as N):\n%s", out, strings.Join(want, "\n"))
	}

	if _, rc := phases(t, env, "reset"); rc != 0 {
		t.Fatal("reset failed")
	}
	if out, _ := phases(t, env, "summary"); !strings.Contains(out, "no phase times recorded") {
		t.Errorf("summary after reset: %q", out)
	}
}
