package eviction

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/ptr"
)

func TestParseThresholds(t *testing.T) {
	for _, tc := range []struct {
		spec, want, err string
	}{
		{spec: "", want: "memory.available<100Mi,nodefs.available<10%,nodefs.inodesFree<5%,imagefs.available<15%"},
		{spec: "memory.available<1Gi", want: "memory.available<1Gi"},
		{spec: "memory.available<100%, pid.available<10", want: "memory.available<100%,pid.available<10"},
		{spec: "memory.available<0%,nodefs.available<0", want: ""},
		{spec: "memory.available=1Gi", err: "want signal<value"},
		{spec: "cpu.available<1", err: "unknown signal"},
		{spec: "memory.available<120%", err: "between 0% and 100%"},
		{spec: "memory.available<1Gi,memory.available<2Gi", err: "given twice"},
		{spec: "memory.available<lots", err: "quantities must match"},
	} {
		got, err := ParseThresholds(tc.spec)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want one containing %q", tc.spec, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.spec, err)
			continue
		}
		var parts []string
		for _, th := range got {
			parts = append(parts, th.String())
		}
		if s := strings.Join(parts, ","); s != tc.want {
			t.Errorf("%q: got %q, want %q", tc.spec, s, tc.want)
		}
	}
}

func pod(name string, priority int32, memRequest string) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name)},
		Spec: v1.PodSpec{Priority: ptr.To(priority), Containers: []v1.Container{{Name: "c"}}}}
	if memRequest != "" {
		p.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceMemory: resource.MustParse(memRequest)}
	}
	return p
}

func podStats(name string, workingSet uint64, ephemeral uint64, procs uint64) statsapi.PodStats {
	return statsapi.PodStats{
		PodRef:           statsapi.PodReference{Name: name, Namespace: "ns", UID: "uid-" + name},
		Containers:       []statsapi.ContainerStats{{Name: "c", Memory: &statsapi.MemoryStats{WorkingSetBytes: ptr.To(workingSet)}}},
		EphemeralStorage: &statsapi.FsStats{UsedBytes: ptr.To(ephemeral), InodesUsed: ptr.To[uint64](1)},
		ProcessStats:     &statsapi.ProcessStats{ProcessCount: ptr.To(procs)},
	}
}

func summary(memAvailable uint64, fsAvailable uint64, pods ...statsapi.PodStats) *statsapi.Summary {
	return &statsapi.Summary{
		Node: statsapi.NodeStats{
			Memory: &statsapi.MemoryStats{AvailableBytes: ptr.To(memAvailable), WorkingSetBytes: ptr.To[uint64](6 << 30)},
			Fs:     &statsapi.FsStats{AvailableBytes: ptr.To(fsAvailable), CapacityBytes: ptr.To[uint64](100 << 30), InodesFree: ptr.To[uint64](1000), Inodes: ptr.To[uint64](1000)},
			Rlimit: &statsapi.RlimitStats{MaxPID: ptr.To[int64](1000), NumOfRunningProcesses: ptr.To[int64](10)},
		},
		Pods: pods,
	}
}

func TestDecide(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	thresholds, err := ParseThresholds("memory.available<1Gi,nodefs.available<10%,pid.available<5")
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Thresholds: thresholds, PressureTransitionPeriod: 5 * time.Minute}
	burstable := pod("burstable", 0, "200Mi")
	bestEffort := pod("besteffort", 0, "")
	bigBestEffort := pod("big-besteffort", 0, "")
	important := pod("important", 1000, "")
	overRequest := pod("over-request", 0, "10Mi")
	stats := []statsapi.PodStats{
		podStats("burstable", 100<<20, 5<<30, 50), podStats("besteffort", 10<<20, 1<<20, 1),
		podStats("big-besteffort", 50<<20, 2<<30, 2), podStats("important", 500<<20, 0, 1), podStats("over-request", 30<<20, 0, 1),
	}
	all := []*v1.Pod{burstable, important, bestEffort, overRequest, bigBestEffort}
	for _, tc := range []struct {
		name         string
		summary      *statsapi.Summary
		lastObserved map[v1.NodeConditionType]time.Time
		wantPressure []v1.NodeConditionType
		wantOrder    []string
		wantMessage  string
	}{
		{
			name:    "no pressure",
			summary: summary(4<<30, 50<<30, stats...),
		},
		{
			// Pods over their requests first (BestEffort always is), lower priority first, then
			// the largest use above the request; the Burstable pod within its request goes last.
			name:         "memory",
			summary:      summary(512<<20, 50<<30, stats...),
			wantPressure: []v1.NodeConditionType{v1.NodeMemoryPressure},
			wantOrder:    []string{"big-besteffort", "over-request", "besteffort", "important", "burstable"},
			wantMessage:  "The node was low on resource: memory. Threshold quantity: 1Gi, available: 512Mi. Container c was using 50Mi, request is 0, has larger consumption of memory. ",
		},
		{
			name:         "nodefs",
			summary:      summary(4<<30, 5<<30, stats...),
			wantPressure: []v1.NodeConditionType{v1.NodeDiskPressure},
			wantOrder:    []string{"burstable", "big-besteffort", "besteffort", "over-request", "important"},
			// 10% of 100Gi as the kubelet computes it: a float32 fraction, 10737418400 bytes.
			wantMessage: "The node was low on resource: ephemeral-storage. Threshold quantity: 10737418400, available: 5Gi. ",
		},
		{
			name:         "memory before disk",
			summary:      summary(512<<20, 5<<30, stats...),
			wantPressure: []v1.NodeConditionType{v1.NodeMemoryPressure, v1.NodeDiskPressure},
			wantOrder:    []string{"big-besteffort", "over-request", "besteffort", "important", "burstable"},
		},
		{
			name:         "pressure kept during the transition period",
			summary:      summary(4<<30, 50<<30, stats...),
			lastObserved: map[v1.NodeConditionType]time.Time{v1.NodeMemoryPressure: t0.Add(-time.Minute), v1.NodeDiskPressure: t0.Add(-10 * time.Minute)},
			wantPressure: []v1.NodeConditionType{v1.NodeMemoryPressure},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := decide(t0, opts, tc.summary, all, state{lastObserved: tc.lastObserved})
			for _, c := range []v1.NodeConditionType{v1.NodeMemoryPressure, v1.NodeDiskPressure, v1.NodePIDPressure} {
				want := false
				for _, w := range tc.wantPressure {
					want = want || w == c
				}
				if d.state.pressure[c] != want {
					t.Errorf("%s = %v, want %v", c, d.state.pressure[c], want)
				}
			}
			var order []string
			for _, c := range d.candidates {
				order = append(order, c.pod.Name)
			}
			if strings.Join(order, ",") != strings.Join(tc.wantOrder, ",") {
				t.Errorf("eviction order %v, want %v", order, tc.wantOrder)
			}
			if tc.wantMessage != "" && d.candidates[0].message != tc.wantMessage {
				t.Errorf("message %q, want %q", d.candidates[0].message, tc.wantMessage)
			}
		})
	}
}

func TestActivePods(t *testing.T) {
	now := metav1.Now()
	running := pod("running", 0, "")
	deleting := pod("deleting", 0, "")
	deleting.DeletionTimestamp = &now
	done := pod("done", 0, "")
	done.Status.Phase = v1.PodSucceeded
	got := activePods([]*v1.Pod{running, deleting, done})
	if len(got) != 1 || got[0].Name != "running" {
		t.Errorf("active pods %v, want only running", got)
	}
}

func TestAdmit(t *testing.T) {
	tolerating := pod("tolerating", 0, "")
	tolerating.Spec.Tolerations = []v1.Toleration{{Key: v1.TaintNodeMemoryPressure, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}}
	critical := pod("critical", systemCriticalPriority, "")
	mem := []v1.NodeConditionType{v1.NodeMemoryPressure}
	disk := []v1.NodeConditionType{v1.NodeDiskPressure}
	both := []v1.NodeConditionType{v1.NodeMemoryPressure, v1.NodeDiskPressure}
	for _, tc := range []struct {
		name       string
		pod        *v1.Pod
		bestEffort bool
		pressure   []v1.NodeConditionType
		want       string
	}{
		{name: "no pressure", pod: pod("a", 0, ""), bestEffort: true},
		{name: "memory: burstable admitted", pod: pod("a", 0, "10Mi"), pressure: mem},
		{name: "memory: besteffort rejected", pod: pod("a", 0, ""), bestEffort: true, pressure: mem, want: "The node had condition: [MemoryPressure]. "},
		{name: "memory: tolerating besteffort admitted", pod: tolerating, bestEffort: true, pressure: mem},
		{name: "disk: burstable rejected", pod: pod("a", 0, "10Mi"), pressure: disk, want: "The node had condition: [DiskPressure]. "},
		{name: "memory and disk", pod: tolerating, bestEffort: true, pressure: both, want: "The node had condition: [MemoryPressure DiskPressure]. "},
		{name: "critical admitted", pod: critical, bestEffort: true, pressure: both},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reason, msg := Admit(tc.pod, tc.pressure, tc.bestEffort)
			if msg != tc.want || (tc.want != "" && reason != "Evicted") || (tc.want == "" && reason != "") {
				t.Errorf("Admit = %q, %q; want Evicted, %q", reason, msg, tc.want)
			}
		})
	}
	if got := PressureList(map[v1.NodeConditionType]bool{v1.NodePIDPressure: true, v1.NodeMemoryPressure: true, v1.NodeDiskPressure: false}); len(got) != 2 || got[0] != v1.NodeMemoryPressure {
		t.Errorf("PressureList = %v", got)
	}
}
