package provider

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	internalapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-cri/vk-cri/cm"
	"github.com/vk-cri/vk-cri/cri"
)

// callLog is the order of the calls made to the runtime and to the pod cgroups.
type callLog struct{ calls []string }

func (l *callLog) add(format string, args ...any) {
	l.calls = append(l.calls, fmt.Sprintf(format, args...))
}

// resizeRuntime answers the calls a resize makes; everything else is left out (nil).
type resizeRuntime struct {
	internalapi.RuntimeService
	log   *callLog
	usage uint64
}

func (r *resizeRuntime) UpdateContainerResources(_ context.Context, id string, res *runtimeapi.ContainerResources) error {
	r.log.add("container %s memory=%d", id, res.GetLinux().GetMemoryLimitInBytes())
	return nil
}

func (r *resizeRuntime) ContainerStats(context.Context, string) (*runtimeapi.ContainerStats, error) {
	return &runtimeapi.ContainerStats{Memory: &runtimeapi.MemoryUsage{UsageBytes: &runtimeapi.UInt64Value{Value: r.usage}}}, nil
}

// fakePodCgroups holds one pod cgroup's settings.
type fakePodCgroups struct {
	log     *callLog
	current *cm.ResourceConfig
	usage   int64
}

func (f *fakePodCgroups) Start(*cm.ResourceConfig) error        { return nil }
func (f *fakePodCgroups) EnsurePod(*v1.Pod, []*v1.Pod) error    { return nil }
func (f *fakePodCgroups) UpdateQOS([]*v1.Pod) error             { return nil }
func (f *fakePodCgroups) DestroyPod(types.UID) error            { return nil }
func (f *fakePodCgroups) PodMemoryUsage(*v1.Pod) (int64, error) { return f.usage, nil }
func (f *fakePodCgroups) ReadPod(*v1.Pod) (*cm.ResourceConfig, error) {
	if f.current == nil {
		return nil, errors.New("no pod cgroup")
	}
	return f.current, nil
}
func (f *fakePodCgroups) SetPod(_ *v1.Pod, rc *cm.ResourceConfig) error {
	var parts []string
	if rc.Memory != nil {
		parts = append(parts, fmt.Sprintf("memory=%d", *rc.Memory))
		f.current.Memory = rc.Memory
	}
	if rc.CPUQuota != nil {
		parts = append(parts, fmt.Sprintf("quota=%d", *rc.CPUQuota))
	}
	if rc.CPUShares != nil {
		parts = append(parts, fmt.Sprintf("shares=%d", *rc.CPUShares))
	}
	f.log.add("pod %s", strings.Join(parts, " "))
	return nil
}
func (f *fakePodCgroups) CleanupOrphans(func(types.UID) bool) ([]types.UID, error) { return nil, nil }

func guaranteedMemoryPod(memory string) *v1.Pod {
	c := ctr("c")
	q := v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse(memory)}
	c.Resources = v1.ResourceRequirements{Requests: q, Limits: q.DeepCopy()}
	return testPod(withContainers(c))
}

// The pod cgroup's memory limit follows the container's in the kubelet's order: raised before
// the container, lowered after it; a pod limit below the pod's usage is refused before anything.
func TestResizeUpdatesThePodCgroupAroundTheContainers(t *testing.T) {
	mi := int64(1 << 20)
	cases := []struct {
		name          string
		from, to      string
		podUsage      int64
		want          []string
		wantErrSubstr string
	}{
		{name: "memory up: pod first", from: "64Mi", to: "128Mi", podUsage: 10 * mi,
			want: []string{"pod memory=134217728", "container c1 memory=134217728"}},
		{name: "memory down: container first", from: "64Mi", to: "32Mi", podUsage: 10 * mi,
			want: []string{"container c1 memory=33554432", "pod memory=33554432"}},
		{name: "memory down below the pod's usage: refused", from: "64Mi", to: "32Mi", podUsage: 40 * mi,
			wantErrSubstr: `cannot decrease memory limits: [attempting to set pod memory limit (33554432) below current usage (41943040), attempting to set container "c" memory limit (33554432) below current usage (41943040)]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			log := &callLog{}
			old := guaranteedMemoryPod(tc.from)
			cur := cm.PodResourceConfig(old, cm.DefaultPodOptions())
			pcg := &fakePodCgroups{log: log, current: cur, usage: tc.podUsage}
			rt := &cri.Client{Runtime: &resizeRuntime{log: log, usage: uint64(tc.podUsage)}}
			p := &Provider{
				cfg:       Config{PodCgroups: pcg, PodCgroupOptions: cm.DefaultPodOptions()},
				rt:        rt,
				inspector: newInspector(rt, "node"),
				log:       logrus.NewEntry(logrus.New()),
				alloc:     newAllocationStore(filepath.Join(t.TempDir(), "alloc.json")),
			}
			pod := guaranteedMemoryPod(tc.to)
			pod.UID = old.UID
			target := resizeTarget{ID: "c1", Name: "c", Desired: pod.Spec.Containers[0].Resources, Current: old.Spec.Containers[0].Resources}
			err := p.resizeContainers(context.Background(), &podRecord{uid: pod.UID}, pod, []resizeTarget{target})
			if tc.wantErrSubstr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErrSubstr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErrSubstr)
				}
				if len(log.calls) != 0 {
					t.Errorf("a refused resize changed things: %v", log.calls)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(log.calls, "; ") != strings.Join(tc.want, "; ") {
				t.Errorf("calls %v, want %v", log.calls, tc.want)
			}
		})
	}
}

// A container restarted by its resize policy has no in-place update, but its pod cgroup still
// takes the new limit (the kubelet's UpdatePodResources).
func TestResizeRestartUpdatesThePodCgroup(t *testing.T) {
	log := &callLog{}
	old := guaranteedMemoryPod("64Mi")
	pcg := &fakePodCgroups{log: log, current: cm.PodResourceConfig(old, cm.DefaultPodOptions())}
	rt := &cri.Client{Runtime: &resizeRuntime{log: log}}
	p := &Provider{
		cfg: Config{PodCgroups: pcg, PodCgroupOptions: cm.DefaultPodOptions()}, rt: rt, inspector: newInspector(rt, "node"),
		log: logrus.NewEntry(logrus.New()), alloc: newAllocationStore(filepath.Join(t.TempDir(), "alloc.json")),
	}
	a := podActions{ContainersToKill: []killTarget{{ID: "c1", Name: "c", Reason: "resize"}}}
	if !restartsForResize(a) || restartsForResize(podActions{ContainersToKill: []killTarget{{Reason: killNotStarted}}}) {
		t.Fatal("restartsForResize does not tell a resize restart from other kills")
	}
	pod := guaranteedMemoryPod("128Mi")
	if err := p.resizeContainers(context.Background(), &podRecord{uid: pod.UID}, pod, nil); err != nil {
		t.Fatal(err)
	}
	if strings.Join(log.calls, "; ") != "pod memory=134217728" {
		t.Errorf("calls %v, want the pod cgroup's new limit only", log.calls)
	}
}
