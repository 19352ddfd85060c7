package logrotate

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	critesting "k8s.io/cri-api/pkg/apis/testing"
	clocktesting "k8s.io/utils/clock/testing"
)

// fakeRuntime is cri-api's fake runtime whose ReopenContainerLog creates the new, empty log
// file, as containerd does.
type fakeRuntime struct {
	*critesting.FakeRuntimeService
	logs map[string]string // container ID → log path
}

func (f *fakeRuntime) ReopenContainerLog(ctx context.Context, id string) error {
	if err := f.FakeRuntimeService.ReopenContainerLog(ctx, id); err != nil {
		return err
	}
	return os.WriteFile(f.logs[id], nil, 0o640)
}

func newFakeRuntime(t *testing.T, dir string, running map[string]runtimeapi.ContainerState) *fakeRuntime {
	t.Helper()
	f := &fakeRuntime{FakeRuntimeService: critesting.NewFakeRuntimeService(), logs: map[string]string{}}
	var cs []*critesting.FakeContainer
	for id, state := range running {
		path := filepath.Join(dir, id, "0.log")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		f.logs[id] = path
		cs = append(cs, &critesting.FakeContainer{ContainerStatus: runtimeapi.ContainerStatus{
			Id: id, State: state, LogPath: path, Metadata: &runtimeapi.ContainerMetadata{Name: id},
			Labels: map[string]string{"io.vk-cri.node": "n1"},
		}})
	}
	f.SetFakeContainers(cs)
	return f
}

func dirFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func TestRotateOnceRotatesCompressesAndKeepsTheCount(t *testing.T) {
	dir := t.TempDir()
	rt := newFakeRuntime(t, dir, map[string]runtimeapi.ContainerState{
		"big": runtimeapi.ContainerState_CONTAINER_RUNNING, "small": runtimeapi.ContainerState_CONTAINER_RUNNING,
		"exited": runtimeapi.ContainerState_CONTAINER_EXITED,
	})
	clock := clocktesting.NewFakeClock(time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC))
	m, err := New(rt, WithPolicy(Policy{MaxSize: 10, MaxFiles: 3}), WithClock(clock),
		WithSelector(map[string]string{"io.vk-cri.node": "n1"}), WithLogger(logrus.NewEntry(logrus.New())))
	if err != nil {
		t.Fatal(err)
	}
	write := func(id, content string) {
		if err := os.WriteFile(rt.logs[id], []byte(content), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	write("small", "tiny")
	write("exited", "an exited container's log, long enough")
	for round, content := range []string{"first log, long enough", "second log, long enough", "third log, long enough"} {
		write("big", content)
		if err := m.RotateOnce(context.Background()); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		clock.Step(time.Minute)
	}
	got := dirFiles(t, filepath.Join(dir, "big"))
	want := []string{"0.log", "0.log.20261130-080100.gz", "0.log.20261130-080200"}
	if !slices.Equal(got, want) {
		t.Fatalf("files after three rotations: %v, want %v", got, want)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "big", "0.log.20261130-080200")); string(b) != "third log, long enough" {
		t.Errorf("newest rotated file holds %q", b)
	}
	f, err := os.Open(filepath.Join(dir, "big", "0.log.20261130-080100.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(zr); !bytes.Equal(b, []byte("second log, long enough")) {
		t.Errorf("compressed file holds %q", b)
	}
	if got := dirFiles(t, filepath.Join(dir, "small")); !slices.Equal(got, []string{"0.log"}) {
		t.Errorf("a log under the size limit was touched: %v", got)
	}
	if got := dirFiles(t, filepath.Join(dir, "exited")); !slices.Equal(got, []string{"0.log"}) {
		t.Errorf("an exited container's log was rotated: %v", got)
	}
}

func TestRotateRenamesBackWhenTheRuntimeCannotReopen(t *testing.T) {
	dir := t.TempDir()
	rt := newFakeRuntime(t, dir, map[string]runtimeapi.ContainerState{"c": runtimeapi.ContainerState_CONTAINER_RUNNING})
	rt.InjectError("ReopenContainerLog", errors.New("runtime busy"))
	if err := os.WriteFile(rt.logs["c"], []byte("a log long enough"), 0o640); err != nil {
		t.Fatal(err)
	}
	m, err := New(rt, WithPolicy(Policy{MaxSize: 10, MaxFiles: 5}), WithLogger(logrus.NewEntry(logrus.New())))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.RotateOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := dirFiles(t, filepath.Join(dir, "c")); !slices.Equal(got, []string{"0.log"}) {
		t.Fatalf("files after a failed reopen: %v, want the log under its own name", got)
	}
	// The next round succeeds.
	if err := m.RotateOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := dirFiles(t, filepath.Join(dir, "c")); len(got) != 2 {
		t.Fatalf("files after the second round: %v", got)
	}
}

func TestRemoveLogsRemovesRotatedFilesOnly(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"0.log", "0.log.20261130-080000.gz", "0.log.20261130-080100", "1.log"} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o640); err != nil {
			t.Fatal(err)
		}
	}
	if err := RemoveLogs(filepath.Join(dir, "0.log")); err != nil {
		t.Fatal(err)
	}
	if got := dirFiles(t, dir); !slices.Equal(got, []string{"1.log"}) {
		t.Errorf("left %v, want only the other instance's 1.log", got)
	}
}

func TestNewRefusesABadPolicy(t *testing.T) {
	if _, err := New(critesting.NewFakeRuntimeService(), WithPolicy(Policy{MaxSize: 1, MaxFiles: 1})); err == nil {
		t.Error("a policy of one file was accepted")
	}
	if _, err := New(critesting.NewFakeRuntimeService(), WithInterval(0)); err == nil {
		t.Error("a zero interval was accepted")
	}
}
