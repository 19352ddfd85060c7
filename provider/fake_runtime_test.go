package provider

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-cri/vk-cri/provider/prober"
	"github.com/vk-cri/vk-cri/provider/volumes"
)

// fakeRuntime is a podRuntimeService holding one pod's sandboxes and containers in memory. It
// records each call; starting anything is not supported (the tests that use it start nothing).
type fakeRuntime struct {
	mu    sync.Mutex
	state podRuntime
	calls []string
	// failInspect, when set, is returned by the next inspectPod.
	failInspect error
	// failRunSandbox, when set, is what RunPodSandbox fails with.
	failRunSandbox error
	// failRemoveContainer, when set, is returned by the next RemoveContainer.
	failRemoveContainer error
}

func (f *fakeRuntime) inspectPod(context.Context, string) (*podRuntime, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.failInspect; err != nil {
		f.failInspect = nil
		return nil, err
	}
	out := &podRuntime{}
	for _, sb := range f.state.Sandboxes {
		c := *sb
		out.Sandboxes = append(out.Sandboxes, &c)
	}
	for _, c := range f.state.Containers {
		cc := *c
		out.Containers = append(out.Containers, &cc)
	}
	return out, nil
}

func (f *fakeRuntime) record(format string, args ...any) {
	f.calls = append(f.calls, fmt.Sprintf(format, args...))
}

var errFakeCannotStart = errors.New("the fake runtime starts nothing")

func (f *fakeRuntime) RunPodSandbox(_ context.Context, _ *runtimeapi.PodSandboxConfig, handler string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("RunPodSandbox handler=%q", handler)
	if f.failRunSandbox != nil {
		return "", f.failRunSandbox
	}
	return "", errFakeCannotStart
}

func (f *fakeRuntime) CreateContainer(context.Context, string, *runtimeapi.ContainerConfig, *runtimeapi.PodSandboxConfig) (string, error) {
	return "", errFakeCannotStart
}

func (f *fakeRuntime) StartContainer(context.Context, string) error { return errFakeCannotStart }

func (f *fakeRuntime) StopPodSandbox(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("StopPodSandbox %s", id)
	for _, sb := range f.state.Sandboxes {
		if sb.ID == id {
			sb.Ready = false
		}
	}
	return nil
}

func (f *fakeRuntime) RemovePodSandbox(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("RemovePodSandbox %s", id)
	var kept []*sandboxState
	for _, sb := range f.state.Sandboxes {
		if sb.ID != id {
			kept = append(kept, sb)
		}
	}
	f.state.Sandboxes = kept
	return nil
}

// StopContainer stops the container as SIGTERM does a well-behaved process: exit code 143.
func (f *fakeRuntime) StopContainer(_ context.Context, id string, timeout int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("StopContainer %s %d", id, timeout)
	for _, c := range f.state.Containers {
		if c.ID == id && c.running() {
			c.State, c.ExitCode, c.Reason, c.FinishedAt = runtimeapi.ContainerState_CONTAINER_EXITED, 143, "Error", testT0.Add(time.Hour)
		}
	}
	return nil
}

func (f *fakeRuntime) RemoveContainer(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("RemoveContainer %s", id)
	if err := f.failRemoveContainer; err != nil {
		f.failRemoveContainer = nil
		return err
	}
	var kept []*containerState
	for _, c := range f.state.Containers {
		if c.ID != id {
			kept = append(kept, c)
		}
	}
	f.state.Containers = kept
	return nil
}

// fakeVolumes is a VolumeManager whose set-up always succeeds and which records its teardowns.
type fakeVolumes struct {
	mu       sync.Mutex
	tornDown []types.UID
}

func (v *fakeVolumes) SetUp(context.Context, *v1.Pod) volumes.SetUpResult {
	return volumes.SetUpResult{}
}

func (v *fakeVolumes) ContainerMounts(*v1.Pod, *v1.Container, volumes.ExpandFunc) ([]*runtimeapi.Mount, error) {
	return nil, nil
}

func (v *fakeVolumes) TearDown(uid types.UID) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.tornDown = append(v.tornDown, uid)
	return nil
}

func (v *fakeVolumes) CleanupOrphans(func(types.UID) bool) ([]types.UID, error) { return nil, nil }

// noProbes is a probeManager without probes: every container is ready and started.
type noProbes struct {
	mu              sync.Mutex
	stoppedLiveness []types.UID
	removed         []types.UID
}

func (*noProbes) Result(prober.Kind, string) (prober.Result, bool) { return prober.Result(0), false }
func (*noProbes) UpdatePodStatus(*v1.Pod, *v1.PodStatus)           {}
func (*noProbes) AddPod(*v1.Pod)                                   {}
func (*noProbes) TriggerUnready(*v1.Pod, *v1.PodStatus)            {}
func (f *noProbes) StopLivenessAndStartup(uid types.UID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stoppedLiveness = append(f.stoppedLiveness, uid)
}
func (f *noProbes) RemovePod(uid types.UID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.removed = append(f.removed, uid)
}
