package provider

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// envelope wraps data in a checkpoint whose checksum holds.
func envelope(data string) string {
	return fmt.Sprintf(`{"data":%q,"checksum":%d}`, data, allocationChecksum(data))
}

const legacyAllocations = `{"version":1,"pods":{"u1":{"allocated":{"a":{"requests":{"cpu":"100m"}}},"actuated":{"a":{"requests":{"cpu":"50m"}}}}}}`

func TestDecodeAllocationCheckpoint(t *testing.T) {
	good := envelope(`{"version":2,"pods":{"u1":{"allocated":{"a":{"requests":{"cpu":"100m"}}}}}}`)
	damaged := strings.Replace(good, "100m", "900m", 1)
	for _, tc := range []struct {
		name, content string
		pods          int
		corrupt       bool
		newer         int
	}{
		{name: "checksummed", content: good, pods: 1},
		{name: "empty store", content: envelope(`{"version":2,"pods":{}}`)},
		{name: "version 1 (no checksum)", content: legacyAllocations, pods: 1},
		{name: "version 1 without pods", content: `{"version":1}`},
		{name: "data changed under its checksum", content: damaged, corrupt: true},
		{name: "checksum changed", content: strings.Replace(good, `"checksum":`, `"checksum":1`, 1), corrupt: true},
		{name: "torn write", content: good[:len(good)/2], corrupt: true},
		{name: "empty file", content: "", corrupt: true},
		{name: "zeros", content: "\x00\x00\x00\x00", corrupt: true},
		{name: "null", content: "null", corrupt: true},
		{name: "an array", content: "[]", corrupt: true},
		{name: "no version", content: `{"pods":{}}`, corrupt: true},
		{name: "checksum without data", content: `{"checksum":5,"version":1}`, corrupt: true},
		{name: "envelope and bare data", content: strings.Replace(good, `{"data"`, `{"version":1,"data"`, 1), corrupt: true},
		{name: "checksummed data not JSON", content: envelope(`{"version":`), corrupt: true},
		{name: "checksummed data of version 1", content: envelope(`{"version":1,"pods":{}}`), corrupt: true},
		{name: "a pod without its allocation", content: envelope(`{"version":2,"pods":{"u1":null}}`), corrupt: true},
		{name: "an invalid quantity", content: envelope(`{"version":2,"pods":{"u1":{"allocated":{"a":{"requests":{"cpu":"lots"}}}}}}`), corrupt: true},
		{name: "newer, checksummed", content: envelope(`{"version":3,"pods":{"u1":{"whatever":true}}}`), newer: 3},
		{name: "newer, bare", content: `{"version":7,"layout":"unknown"}`, newer: 7},
		{name: "newer, checksummed, pods of another shape", content: envelope(`{"version":3,"pods":[1,2]}`), newer: 3},
		{name: "newer, bare, pods of another shape", content: `{"version":4,"pods":"elsewhere"}`, newer: 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pods, err := decodeAllocationCheckpoint([]byte(tc.content))
			var newer *NewerAllocationCheckpointError
			switch {
			case tc.corrupt:
				if !errors.Is(err, ErrCorruptAllocationCheckpoint) {
					t.Errorf("error %v, want it corrupt", err)
				}
			case tc.newer != 0:
				if !errors.As(err, &newer) || newer.Version != tc.newer || errors.Is(err, ErrCorruptAllocationCheckpoint) {
					t.Errorf("error %v, want a newer version %d, not corruption", err, tc.newer)
				}
			case err != nil:
				t.Errorf("error %v", err)
			case pods == nil || len(pods) != tc.pods:
				t.Errorf("%d pods (%v), want %d", len(pods), pods, tc.pods)
			}
		})
	}
}

func TestAllocationCheckpointRoundTrip(t *testing.T) {
	pods := map[types.UID]*podAllocation{
		"u1": {Allocated: map[string]v1.ResourceRequirements{"a": res("100m", "64Mi", "200m", "128Mi")}, Actuated: map[string]v1.ResourceRequirements{"a": res("50m", "", "", "")}},
		"u2": {Allocated: map[string]v1.ResourceRequirements{}},
	}
	content, err := encodeAllocationCheckpoint(pods)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeAllocationCheckpoint(content)
	if err != nil {
		t.Fatal(err)
	}
	again, err := encodeAllocationCheckpoint(got)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(content, again) {
		t.Errorf("round trip changed the checkpoint:\n%s\n%s", content, again)
	}
	if a := got["u1"].Actuated["a"]; a.Requests.Cpu().String() != "50m" {
		t.Errorf("actuated %v", a)
	}
}

// A damaged file stops vk-cri with the kubelet's advice, and is left as it was for whoever
// looks at it; the store keeps nothing of it.
func TestAllocationStoreRefusesACorruptCheckpoint(t *testing.T) {
	path := filepath.Join(t.TempDir(), allocationFile)
	s := newAllocationStore(path)
	if err := s.setAllocated("u1", map[string]v1.ResourceRequirements{"a": res("100m", "", "", "")}); err != nil {
		t.Fatal(err)
	}
	content, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	damaged := bytes.Replace(content, []byte("100m"), []byte("900m"), 1)
	if bytes.Equal(damaged, content) {
		t.Fatalf("the checkpoint does not hold the allocation: %s", content)
	}
	if err := os.WriteFile(path, damaged, 0o600); err != nil {
		t.Fatal(err)
	}
	next := newAllocationStore(path)
	err = next.load()
	if !errors.Is(err, ErrCorruptAllocationCheckpoint) || !strings.Contains(err.Error(), "please drain this node and delete that file") || !strings.Contains(err.Error(), path) {
		t.Errorf("load of a damaged checkpoint: %v", err)
	}
	if _, ok := next.allocated("u1"); ok {
		t.Error("a damaged checkpoint's allocation was taken")
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, damaged) {
		t.Error("the damaged checkpoint was changed")
	}
}

// A version 1 file (no checksum) is read, and written back checksummed at the next change.
func TestAllocationStoreUpgradesVersion1(t *testing.T) {
	path := filepath.Join(t.TempDir(), allocationFile)
	if err := os.WriteFile(path, []byte(legacyAllocations), 0o600); err != nil {
		t.Fatal(err)
	}
	s := newAllocationStore(path)
	if err := s.load(); err != nil {
		t.Fatal(err)
	}
	got, ok := s.allocated("u1")
	if a := got["a"]; !ok || a.Requests.Cpu().String() != "100m" {
		t.Fatalf("version 1 allocation: %v %v", got, ok)
	}
	if err := s.setAllocated("u2", map[string]v1.ResourceRequirements{}); err != nil {
		t.Fatal(err)
	}
	content, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(content, []byte(`{"data":`)) {
		t.Errorf("rewritten as %s, want the checksummed envelope", content)
	}
	pods, err := decodeAllocationCheckpoint(content)
	if actuated := pods["u1"].Actuated["a"]; err != nil || len(pods) != 2 || actuated.Requests.Cpu().String() != "50m" {
		t.Errorf("rewritten checkpoint: %v %v", pods, err)
	}
	if matches, _ := filepath.Glob(path + ".tmp-*"); len(matches) != 0 {
		t.Errorf("temporary files left: %v", matches)
	}
}

// FuzzDecodeAllocationCheckpoint: whatever the file holds, the loader returns an error or a
// store without nil entries, never panics, and what it accepts is written back in a form that
// reads back the same. Seeds: testdata/fuzz/FuzzDecodeAllocationCheckpoint (run by go test).
func FuzzDecodeAllocationCheckpoint(f *testing.F) {
	f.Fuzz(func(t *testing.T, content []byte) {
		pods, err := decodeAllocationCheckpoint(content)
		if err != nil {
			var newer *NewerAllocationCheckpointError
			if !errors.Is(err, ErrCorruptAllocationCheckpoint) && !errors.As(err, &newer) {
				t.Fatalf("error %v is neither corruption nor a newer version", err)
			}
			return
		}
		if pods == nil {
			t.Fatal("nil store without an error")
		}
		for uid, a := range pods {
			if a == nil {
				t.Fatalf("pod %s has a nil allocation", uid)
			}
		}
		once, err := encodeAllocationCheckpoint(pods)
		if err != nil {
			t.Fatalf("accepted store does not encode: %v", err)
		}
		back, err := decodeAllocationCheckpoint(once)
		if err != nil {
			t.Fatalf("written checkpoint does not read back: %v\n%s", err, once)
		}
		twice, err := encodeAllocationCheckpoint(back)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(once, twice) {
			t.Fatalf("checkpoint not stable:\n%s\n%s", once, twice)
		}
	})
}
