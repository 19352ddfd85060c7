package provider

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/vk-cri/vk-cri/provider/translate"
)

const (
	// usernsIDsPerPod is the size of each pod's user namespace: the kubelet's default
	// (idsPerPod, kubeletconfig.DefaultKubeletUserNamespacesIDsPerPod).
	usernsIDsPerPod = 65536
	// usernsMappingsFile is where a pod's range is persisted in its directory, under the
	// kubelet's name and in its format, so that a restarted vk-cri never gives a running pod's
	// IDs to another pod.
	usernsMappingsFile = "userns"
)

// usernsFile is the persisted form of a pod's mappings, the kubelet's userNamespace JSON.
type usernsFile struct {
	UIDMappings []usernsFileMapping `json:"uidMappings"`
	GIDMappings []usernsFileMapping `json:"gidMappings"`
}

type usernsFileMapping struct {
	HostID      uint32 `json:"hostId"`
	ContainerID uint32 `json:"containerId"`
	Length      uint32 `json:"length"`
}

// usernsAllocator hands each pod with a user namespace of its own a range of host IDs of
// usernsIDsPerPod, none shared by two pods, as the kubelet's UsernsManager does
// (pkg/kubelet/userns/userns_manager.go). The ranges are the kubelet's default ones (no kubelet
// user in /etc/subuid): from usernsIDsPerPod up to 2^32, so that no pod ever maps the node's
// root. A pod's range is written to <pods>/<uid>/userns and read back after a restart; it is
// freed when the pod's directory goes.
type usernsAllocator struct {
	podsDir string
	// slots is the number of ranges; range i starts at (i+1)*usernsIDsPerPod.
	slots int
	// pick returns where in [0, n) the search for a free range starts: the kubelet's allocator
	// starts at a random slot; tests pass a fixed start.
	pick func(n int) int

	mu     sync.Mutex
	byPod  map[types.UID]int
	bySlot map[int]types.UID
}

func newUsernsAllocator(podsDir string, pick func(n int) int) *usernsAllocator {
	return &usernsAllocator{
		podsDir: podsDir,
		slots:   int((1<<32)/usernsIDsPerPod) - 1,
		pick:    pick,
		byPod:   map[types.UID]int{},
		bySlot:  map[int]types.UID{},
	}
}

func (a *usernsAllocator) filePath(uid types.UID) string {
	return filepath.Join(a.podsDir, string(uid), usernsMappingsFile)
}

func (a *usernsAllocator) rangeOf(slot int) translate.IDRange {
	return translate.IDRange{First: uint32(slot+1) * usernsIDsPerPod, Length: usernsIDsPerPod}
}

// load records the ranges persisted in the pods' directories. The range of a pod that live says
// is gone is freed (its file removed); a live pod's file that cannot be read back is an error,
// as it is for the kubelet at start-up: its IDs would otherwise be given away.
func (a *usernsAllocator) load(live func(types.UID) bool) error {
	if a == nil {
		return nil
	}
	entries, err := os.ReadDir(a.podsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("user namespaces: reading pod directories: %w", err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		uid := types.UID(e.Name())
		data, err := os.ReadFile(a.filePath(uid))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if !live(uid) {
			_ = os.Remove(a.filePath(uid))
			continue
		}
		if err != nil {
			return fmt.Errorf("user namespace of pod %s: %w", uid, err)
		}
		if _, err := a.recordLocked(uid, data); err != nil {
			return fmt.Errorf("record pod mappings for existing pod %q: %w", uid, err)
		}
	}
	return nil
}

// recordLocked checks a persisted file (the kubelet's parseUserNsFileAndRecord rules) and marks
// its range used by the pod.
func (a *usernsAllocator) recordLocked(uid types.UID, data []byte) (translate.IDRange, error) {
	var f usernsFile
	if err := json.Unmarshal(data, &f); err != nil {
		return translate.IDRange{}, fmt.Errorf("invalid user namespace mappings file: %w", err)
	}
	switch {
	case len(f.UIDMappings) != 1:
		return translate.IDRange{}, errors.New("invalid user namespace configuration: no more than one mapping allowed.")
	case len(f.GIDMappings) != 1 || f.UIDMappings[0] != f.GIDMappings[0]:
		return translate.IDRange{}, errors.New("invalid user namespace configuration: GID and UID mapping should be identical")
	case f.UIDMappings[0].ContainerID != 0:
		return translate.IDRange{}, errors.New("invalid user namespace configuration: UID 0 must be mapped")
	}
	m := f.UIDMappings[0]
	if m.Length != usernsIDsPerPod {
		return translate.IDRange{}, fmt.Errorf("wrong user namespace length %v", m.Length)
	}
	if m.HostID%usernsIDsPerPod != 0 {
		return translate.IDRange{}, fmt.Errorf("wrong user namespace offset specified %v", m.HostID)
	}
	slot := int(m.HostID/usernsIDsPerPod) - 1
	if slot < 0 || slot >= a.slots {
		return translate.IDRange{}, fmt.Errorf("id %v is out of range", m.HostID)
	}
	if prev, ok := a.byPod[uid]; ok {
		if prev != slot {
			return translate.IDRange{}, fmt.Errorf("different user namespace range already used by pod %q", uid)
		}
		return a.rangeOf(slot), nil
	}
	if _, taken := a.bySlot[slot]; taken {
		return translate.IDRange{}, fmt.Errorf("range picked for pod %q already taken", uid)
	}
	a.byPod[uid], a.bySlot[slot] = slot, uid
	return a.rangeOf(slot), nil
}

// rangeFor returns the pod's range, allocating and persisting one for a pod that has none.
func (a *usernsAllocator) rangeFor(uid types.UID) (translate.IDRange, error) {
	if a == nil {
		return translate.IDRange{}, errors.New("create user namespace: no user namespace allocator")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if slot, ok := a.byPod[uid]; ok {
		return a.rangeOf(slot), nil
	}
	data, err := os.ReadFile(a.filePath(uid))
	if err == nil {
		r, err := a.recordLocked(uid, data)
		if err != nil {
			return translate.IDRange{}, fmt.Errorf("user namespace: %w", err)
		}
		return r, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return translate.IDRange{}, fmt.Errorf("user namespace: %w", err)
	}
	slot, ok := a.freeSlotLocked()
	if !ok {
		return translate.IDRange{}, errors.New("create user namespace: could not find an empty slot to allocate a user namespace")
	}
	r := a.rangeOf(slot)
	m := []usernsFileMapping{{HostID: r.First, ContainerID: 0, Length: r.Length}}
	if err := writeFileDurably(a.filePath(uid), usernsFile{UIDMappings: m, GIDMappings: m}); err != nil {
		return translate.IDRange{}, fmt.Errorf("create user namespace: %w", err)
	}
	a.byPod[uid], a.bySlot[slot] = slot, uid
	return r, nil
}

// freeSlotLocked finds a free range, scanning on from where pick says, as the kubelet's
// allocation bitmap does.
func (a *usernsAllocator) freeSlotLocked() (int, bool) {
	if len(a.bySlot) >= a.slots {
		return 0, false
	}
	start := 0
	if a.pick != nil {
		start = a.pick(a.slots)
	}
	for i := 0; i < a.slots; i++ {
		slot := (start + i) % a.slots
		if _, taken := a.bySlot[slot]; !taken {
			return slot, true
		}
	}
	return 0, false
}

// release frees the pod's range and removes its file, once the pod no longer runs.
func (a *usernsAllocator) release(uid types.UID) {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	slot, ok := a.byPod[uid]
	if !ok {
		return
	}
	delete(a.byPod, uid)
	delete(a.bySlot, slot)
	_ = os.Remove(a.filePath(uid))
}

// allocated is the number of pods holding a range (tests, metrics).
func (a *usernsAllocator) allocated() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.byPod)
}

// writeFileDurably writes v as JSON to path through a temporary file renamed into place, and
// syncs the directory: the kubelet's file store is atomic, and it fsyncs the pod directory so
// that the file survives a crash.
func writeFileDurably(path string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return syncDir(dir)
}
