package gc

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// fakeRuntime is a CRI runtime and image service of a few maps; calls are recorded in order.
type fakeRuntime struct {
	mu         sync.Mutex
	containers map[string]*runtimeapi.Container
	sandboxes  map[string]*runtimeapi.PodSandbox
	logPaths   map[string]string
	images     map[string]*runtimeapi.Image
	calls      []string
	failRemove map[string]bool
}

func newFakeRuntime() *fakeRuntime {
	return &fakeRuntime{containers: map[string]*runtimeapi.Container{}, sandboxes: map[string]*runtimeapi.PodSandbox{},
		logPaths: map[string]string{}, images: map[string]*runtimeapi.Image{}, failRemove: map[string]bool{}}
}

func matches(labels, selector map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func (f *fakeRuntime) ListContainers(_ context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*runtimeapi.Container
	for _, c := range f.containers {
		if filter == nil || matches(c.Labels, filter.LabelSelector) {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Id < out[j].Id })
	return out, nil
}

func (f *fakeRuntime) ListPodSandbox(_ context.Context, filter *runtimeapi.PodSandboxFilter) ([]*runtimeapi.PodSandbox, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*runtimeapi.PodSandbox
	for _, s := range f.sandboxes {
		if filter == nil || matches(s.Labels, filter.LabelSelector) {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Id < out[j].Id })
	return out, nil
}

func (f *fakeRuntime) ContainerStatus(_ context.Context, id string, _ bool) (*runtimeapi.ContainerStatusResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.containers[id]; !ok {
		return nil, status.Errorf(codes.NotFound, "container %s not found", id)
	}
	return &runtimeapi.ContainerStatusResponse{Status: &runtimeapi.ContainerStatus{Id: id, LogPath: f.logPaths[id]}}, nil
}

func (f *fakeRuntime) record(call string) { f.calls = append(f.calls, call) }

func (f *fakeRuntime) StopContainer(_ context.Context, id string, _ int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("StopContainer " + id)
	return nil
}

func (f *fakeRuntime) RemoveContainer(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("RemoveContainer " + id)
	if f.failRemove[id] {
		return fmt.Errorf("remove %s: device busy", id)
	}
	delete(f.containers, id)
	return nil
}

func (f *fakeRuntime) StopPodSandbox(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("StopPodSandbox " + id)
	return nil
}

func (f *fakeRuntime) RemovePodSandbox(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("RemovePodSandbox " + id)
	delete(f.sandboxes, id)
	return nil
}

func (f *fakeRuntime) ListImages(context.Context, *runtimeapi.ImageFilter) ([]*runtimeapi.Image, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*runtimeapi.Image
	for _, img := range f.images {
		out = append(out, img)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Id < out[j].Id })
	return out, nil
}

func (f *fakeRuntime) RemoveImage(_ context.Context, spec *runtimeapi.ImageSpec) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("RemoveImage " + spec.Image)
	if f.failRemove[spec.Image] {
		return fmt.Errorf("image %s: in use by a snapshot", spec.Image)
	}
	delete(f.images, spec.Image)
	return nil
}

// fakePods: pods known to the node, and those terminated.
type fakePods struct {
	known, terminated map[types.UID]bool
}

func (p fakePods) ShouldPodContentBeRemoved(uid types.UID) bool { return !p.known[uid] }
func (p fakePods) ShouldPodRuntimeBeRemoved(uid types.UID) bool {
	return !p.known[uid] || p.terminated[uid]
}

// fakeFs is an image file system of a fixed capacity whose use is the fake's images' size.
type fakeFs struct {
	rt       *fakeRuntime
	capacity uint64
	other    uint64 // bytes used by other than images
}

func (f fakeFs) ImageFsStats(context.Context) (*statsapi.FsStats, error) {
	f.rt.mu.Lock()
	defer f.rt.mu.Unlock()
	used := f.other
	for _, img := range f.rt.images {
		used += img.Size
	}
	avail := f.capacity - used
	return &statsapi.FsStats{CapacityBytes: &f.capacity, AvailableBytes: &avail}, nil
}

type event struct{ kind, reason, message string }

type fakeRecorder struct {
	mu     sync.Mutex
	events []event
}

func (r *fakeRecorder) Eventf(_ k8sruntime.Object, kind, reason, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, event{kind, reason, fmt.Sprintf(format, args...)})
}

type fakeCounter map[string]int

func (c fakeCounter) ImageGarbageCollected(reason string) { c[reason]++ }
