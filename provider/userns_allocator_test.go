package provider

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/vk-cri/vk-cri/provider/translate"
)

func TestUsernsAllocatorPersistsAndFrees(t *testing.T) {
	dir := t.TempDir()
	a := newUsernsAllocator(dir, func(int) int { return 0 })
	r1, err := a.rangeFor("pod-a")
	if err != nil {
		t.Fatal(err)
	}
	r2, _ := a.rangeFor("pod-b")
	if r1 != (translate.IDRange{First: 65536, Length: 65536}) || r2 != (translate.IDRange{First: 131072, Length: 65536}) {
		t.Fatalf("ranges %v %v, want the first two slots from 65536 on", r1, r2)
	}
	// The kubelet's file, in its format: a kubelet taking the node over reads it as its own.
	b, err := os.ReadFile(filepath.Join(dir, "pod-a", "userns"))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"uidMappings":[{"hostId":65536,"containerId":0,"length":65536}],"gidMappings":[{"hostId":65536,"containerId":0,"length":65536}]}`; string(b) != want {
		t.Errorf("userns file %s, want %s", b, want)
	}

	// After a restart the running pods keep their ranges and a new pod gets another one; the
	// range of a pod gone meanwhile is freed.
	b2 := newUsernsAllocator(dir, func(int) int { return 0 })
	if err := b2.load(func(uid types.UID) bool { return uid == "pod-b" }); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "pod-a", "userns")); !os.IsNotExist(err) {
		t.Errorf("file of a pod gone while stopped: %v, want removed", err)
	}
	if r, _ := b2.rangeFor("pod-b"); r != r2 {
		t.Errorf("pod-b after restart: %v, want %v", r, r2)
	}
	r3, _ := b2.rangeFor("pod-c")
	if r3 == r2 {
		t.Errorf("pod-c got pod-b's range %v", r3)
	}
	if r3 != r1 {
		t.Errorf("pod-c: %v, want the freed first slot %v", r3, r1)
	}
	b2.release("pod-c")
	if _, err := os.Stat(filepath.Join(dir, "pod-c", "userns")); !os.IsNotExist(err) {
		t.Errorf("released pod's file: %v, want removed", err)
	}
	if n := b2.allocated(); n != 1 {
		t.Errorf("%d allocated after release, want 1", n)
	}
	// The search starts where pick says and goes on past used slots.
	c := newUsernsAllocator(t.TempDir(), func(n int) int { return n - 1 })
	if r, _ := c.rangeFor("x"); r.First != uint32(c.slots)*usernsIDsPerPod {
		t.Errorf("start at the last slot: %v", r)
	}
	if r, _ := c.rangeFor("y"); r.First != usernsIDsPerPod {
		t.Errorf("wrap around to the first slot: %v", r)
	}
	if last := uint64(c.slots+1) * usernsIDsPerPod; last != 1<<32 {
		t.Errorf("slots end at %d, want 2^32", last)
	}
}

func TestUsernsAllocatorRefusesBadFiles(t *testing.T) {
	cases := map[string]string{
		"not JSON":        `{`,
		"two mappings":    `{"uidMappings":[{"hostId":65536,"containerId":0,"length":65536},{"hostId":131072,"containerId":65536,"length":65536}],"gidMappings":[{"hostId":65536,"containerId":0,"length":65536}]}`,
		"uid gid differ":  `{"uidMappings":[{"hostId":65536,"containerId":0,"length":65536}],"gidMappings":[{"hostId":131072,"containerId":0,"length":65536}]}`,
		"root unmapped":   `{"uidMappings":[{"hostId":65536,"containerId":1,"length":65536}],"gidMappings":[{"hostId":65536,"containerId":1,"length":65536}]}`,
		"maps host root":  `{"uidMappings":[{"hostId":0,"containerId":0,"length":65536}],"gidMappings":[{"hostId":0,"containerId":0,"length":65536}]}`,
		"wrong length":    `{"uidMappings":[{"hostId":65536,"containerId":0,"length":1000}],"gidMappings":[{"hostId":65536,"containerId":0,"length":1000}]}`,
		"unaligned start": `{"uidMappings":[{"hostId":65537,"containerId":0,"length":65536}],"gidMappings":[{"hostId":65537,"containerId":0,"length":65536}]}`,
	}
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, "p"), 0o750); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "p", "userns"), []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			a := newUsernsAllocator(dir, nil)
			if err := a.load(func(types.UID) bool { return true }); err == nil {
				t.Error("load accepted the file")
			}
			if _, err := newUsernsAllocator(dir, nil).rangeFor("p"); err == nil {
				t.Error("rangeFor accepted the file")
			}
		})
	}
	// Two pods' files claiming one range: the second is refused.
	dir := t.TempDir()
	a := newUsernsAllocator(dir, nil)
	if _, err := a.rangeFor("one"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "one", "userns"))
	_ = os.MkdirAll(filepath.Join(dir, "two"), 0o750)
	_ = os.WriteFile(filepath.Join(dir, "two", "userns"), b, 0o600)
	if _, err := a.rangeFor("two"); err == nil {
		t.Error("a second pod's file with a taken range was accepted")
	}
}

func TestUsernsAllocatorExhausted(t *testing.T) {
	a := newUsernsAllocator(t.TempDir(), nil)
	a.slots = 2
	for _, uid := range []types.UID{"a", "b"} {
		if _, err := a.rangeFor(uid); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.rangeFor("c"); err == nil {
		t.Fatal("a third pod got a range out of two")
	}
	a.release("a")
	if _, err := a.rangeFor("c"); err != nil {
		t.Fatalf("after a release: %v", err)
	}
}
