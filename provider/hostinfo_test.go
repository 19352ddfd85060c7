package provider

import (
	"os"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestHostResources(t *testing.T) {
	const (
		gi = int64(1) << 30
		mi = int64(1) << 20
	)
	cases := []struct {
		name        string
		host        hostFacts
		maxPods     int
		wantCap     map[v1.ResourceName]int64
		wantAlloc   map[v1.ResourceName]int64
		allocBug    string
		allocBugKey v1.ResourceName
		// wantErr: the reservation exceeds the capacity, which the kubelet refuses to start with.
		wantErr bool
	}{
		{
			name:    "typical node",
			host:    hostFacts{CPUs: 4, MemoryBytes: 8 * gi, StorageBytes: 100 * gi},
			maxPods: 110,
			wantCap: map[v1.ResourceName]int64{
				v1.ResourceCPU: 4, v1.ResourceMemory: 8 * gi, v1.ResourceEphemeralStorage: 100 * gi, v1.ResourcePods: 110,
				"hugepages-1Gi": 0, "hugepages-2Mi": 0,
			},
			wantAlloc: map[v1.ResourceName]int64{
				v1.ResourceCPU: 4, v1.ResourceMemory: 8*gi - 100*mi, v1.ResourceEphemeralStorage: 96636764000, v1.ResourcePods: 110,
				"hugepages-1Gi": 0, "hugepages-2Mi": 0,
			},
		},
		{
			name:    "odd sizes: 10% of storage rounds the reserve down",
			host:    hostFacts{CPUs: 1, MemoryBytes: 1000 * mi, StorageBytes: 1001},
			maxPods: 7,
			wantCap: map[v1.ResourceName]int64{
				v1.ResourceCPU: 1, v1.ResourceMemory: 1000 * mi, v1.ResourceEphemeralStorage: 1001, v1.ResourcePods: 7,
				"hugepages-1Gi": 0, "hugepages-2Mi": 0,
			},
			wantAlloc: map[v1.ResourceName]int64{
				v1.ResourceCPU: 1, v1.ResourceMemory: 900 * mi, v1.ResourceEphemeralStorage: 901, v1.ResourcePods: 7,
				"hugepages-1Gi": 0, "hugepages-2Mi": 0,
			},
		},
		{
			name:    "large disk: no overflow",
			host:    hostFacts{CPUs: 128, MemoryBytes: 2048 * gi, StorageBytes: 500 << 40},
			maxPods: 250,
			wantCap: map[v1.ResourceName]int64{
				v1.ResourceCPU: 128, v1.ResourceMemory: 2048 * gi, v1.ResourceEphemeralStorage: 500 << 40, v1.ResourcePods: 250,
				"hugepages-1Gi": 0, "hugepages-2Mi": 0,
			},
			wantAlloc: map[v1.ResourceName]int64{
				v1.ResourceCPU: 128, v1.ResourceMemory: 2048*gi - 100*mi, v1.ResourceEphemeralStorage: 494780231680000, v1.ResourcePods: 250,
				"hugepages-1Gi": 0, "hugepages-2Mi": 0,
			},
		},
		{
			name:    "memory below the eviction threshold: allocatable is zero, never negative",
			host:    hostFacts{CPUs: 1, MemoryBytes: 64 * mi, StorageBytes: 10 * gi},
			maxPods: 10,
			wantCap: map[v1.ResourceName]int64{
				v1.ResourceCPU: 1, v1.ResourceMemory: 64 * mi, v1.ResourceEphemeralStorage: 10 * gi, v1.ResourcePods: 10,
				"hugepages-1Gi": 0, "hugepages-2Mi": 0,
			},
			wantAlloc: map[v1.ResourceName]int64{
				v1.ResourceCPU: 1, v1.ResourceMemory: 0, v1.ResourceEphemeralStorage: 9663676400, v1.ResourcePods: 10,
				"hugepages-1Gi": 0, "hugepages-2Mi": 0,
			},
			allocBug:    "allocatable memory = capacity − 100Mi goes negative on a node with less than 100Mi; the kubelet clamps negative allocatable to 0",
			allocBugKey: v1.ResourceMemory,
			wantErr:     true,
		},
	}
	check := func(t *testing.T, what string, got v1.ResourceList, want map[v1.ResourceName]int64, skip v1.ResourceName) {
		t.Helper()
		if len(got) != len(want) {
			t.Errorf("%s has %d resources, want %d: %v", what, len(got), len(want), got)
		}
		for name, w := range want {
			if name == skip {
				continue
			}
			q, ok := got[name]
			if !ok {
				t.Errorf("%s lacks %s", what, name)
				continue
			}
			if q.Value() != w {
				t.Errorf("%s[%s] = %s (%d), want %d", what, name, q.String(), q.Value(), w)
			}
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			capacity, alloc, err := tc.host.resources(tc.maxPods, NodeReservation{})
			if (err != nil) != tc.wantErr {
				t.Errorf("error %v, want one: %v", err, tc.wantErr)
			}
			check(t, "capacity", capacity, tc.wantCap, "")
			check(t, "allocatable", alloc, tc.wantAlloc, tc.allocBugKey)
			if tc.allocBug != "" {
				got := alloc[tc.allocBugKey]
				diff := ""
				if got.Value() != tc.wantAlloc[tc.allocBugKey] {
					diff = "allocatable " + string(tc.allocBugKey) + ": want " + resource.NewQuantity(tc.wantAlloc[tc.allocBugKey], resource.BinarySI).String() + ", got " + got.String()
				}
				knownBug(t, tc.allocBug, diff)
			}
		})
	}
}

// Quantities use the formats the kubelet reports: decimal counts for cpu and pods, binary sizes
// for memory and storage.
func TestHostResourcesFormats(t *testing.T) {
	capacity, alloc, err := hostFacts{CPUs: 4, MemoryBytes: 8 << 30, StorageBytes: 100 << 30}.resources(110, NodeReservation{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[v1.ResourceName]string{
		v1.ResourceCPU:              "4",
		v1.ResourceMemory:           "8Gi",
		v1.ResourceEphemeralStorage: "100Gi",
		v1.ResourcePods:             "110",
		"hugepages-1Gi":             "0",
		"hugepages-2Mi":             "0",
	}
	for name, w := range want {
		q := capacity[name]
		if q.String() != w {
			t.Errorf("capacity[%s] = %s, want %s", name, q.String(), w)
		}
	}
	mem := alloc[v1.ResourceMemory]
	if mem.String() != "8092Mi" {
		t.Errorf("allocatable memory = %s, want 8092Mi", mem.String())
	}
	// The allocatable list is a copy: changing it leaves capacity alone.
	alloc[v1.ResourcePods] = resource.MustParse("1")
	if q := capacity[v1.ResourcePods]; q.Value() != 110 {
		t.Errorf("capacity pods changed to %s through allocatable", q.String())
	}
}

// readHostFacts reads the real machine: only its invariants are checked.
func TestReadHostFacts(t *testing.T) {
	if _, err := os.Stat("/proc/meminfo"); err != nil {
		t.Skip("no /proc/meminfo")
	}
	dir := t.TempDir() + "/root/sub"
	h, err := readHostFacts(dir)
	if err != nil {
		t.Fatalf("readHostFacts: %v", err)
	}
	if h.CPUs <= 0 || h.MemoryBytes <= 0 || h.StorageBytes <= 0 {
		t.Errorf("readHostFacts = %+v: non-positive capacity", h)
	}
	if h.OSImage == "" {
		t.Errorf("empty OSImage (want the PRETTY_NAME or \"Unknown\")")
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		t.Errorf("root dir not created: %v", err)
	}
}

func TestReadTrimmed(t *testing.T) {
	p := t.TempDir() + "/id"
	if err := os.WriteFile(p, []byte("  abc123\n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := readTrimmed(p); got != "abc123" {
		t.Errorf("readTrimmed = %q, want abc123", got)
	}
	if got := readTrimmed(p + ".absent"); got != "" {
		t.Errorf("readTrimmed of a missing file = %q, want empty", got)
	}
}
