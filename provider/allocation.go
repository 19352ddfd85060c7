package provider

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
)

// allocationFile is the store's file under the root dir; like the kubelet's allocation and
// actuation checkpoints, it outlives vk-cri's restarts so that a resize accepted (or applied)
// before a restart is neither forgotten nor applied twice.
const allocationFile = "allocated_pods_state.json"

// allocationVersion tags the layout of the checkpoint's data. Version 1 was the data alone,
// without the checksummed envelope; it is still read, and written again as version 2.
const (
	allocationVersion       = 2
	allocationLegacyVersion = 1
)

// podAllocation is what vk-cri decided and did about one pod's container resources.
type podAllocation struct {
	// Allocated are the resources vk-cri admitted, per container name: the spec's until a
	// resize is accepted, the resize's after.
	Allocated map[string]v1.ResourceRequirements `json:"allocated"`
	// Actuated are the resources last applied to each container's running instance through
	// the runtime (at its creation or by UpdateContainerResources).
	Actuated map[string]v1.ResourceRequirements `json:"actuated,omitempty"`
}

type allocationState struct {
	Version int                          `json:"version"`
	Pods    map[types.UID]*podAllocation `json:"pods"`
}

// allocationStore keeps every pod's allocation in memory and on disk; each change is written
// through (a temporary file renamed over the old one), so a crash leaves the old or the new
// state, never half of one.
type allocationStore struct {
	path string

	mu   sync.Mutex
	pods map[types.UID]*podAllocation
}

// newAllocationStore is an empty store kept at path; load reads what an earlier vk-cri left.
func newAllocationStore(path string) *allocationStore {
	return &allocationStore{path: path, pods: map[types.UID]*podAllocation{}}
}

// load reads the store's file; a missing file is an empty store. A file that cannot be
// read back (corrupt, or written by a newer vk-cri) stops vk-cri, as a corrupt allocation
// checkpoint stops the kubelet (pkg/kubelet/allocation: "please drain this node and delete ...
// before restarting"): starting empty would take the specs' resources for the allocated ones
// and undo accepted resizes.
func (s *allocationStore) load() error {
	data, err := os.ReadFile(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the allocation checkpoint: %w", err)
	}
	pods, err := decodeAllocationCheckpoint(data)
	if err != nil {
		return fmt.Errorf("could not restore the pods' allocations from %s: %w; please drain this node and delete that file before restarting vk-cri", s.path, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pods = pods
	return nil
}

// allocated returns the pod's allocated resources per container, if it has been admitted.
func (s *allocationStore) allocated(uid types.UID) (map[string]v1.ResourceRequirements, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.pods[uid]
	if !ok {
		return nil, false
	}
	out := make(map[string]v1.ResourceRequirements, len(a.Allocated))
	for name, r := range a.Allocated {
		out[name] = *r.DeepCopy()
	}
	return out, true
}

// actuated returns what was last applied to each of the pod's running containers.
func (s *allocationStore) actuated(uid types.UID) map[string]v1.ResourceRequirements {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]v1.ResourceRequirements{}
	if a, ok := s.pods[uid]; ok {
		for name, r := range a.Actuated {
			out[name] = *r.DeepCopy()
		}
	}
	return out
}

// setAllocated records the pod's allocation.
func (s *allocationStore) setAllocated(uid types.UID, alloc map[string]v1.ResourceRequirements) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.pods[uid]
	if !ok {
		a = &podAllocation{}
		s.pods[uid] = a
	}
	a.Allocated = map[string]v1.ResourceRequirements{}
	for name, r := range alloc {
		a.Allocated[name] = *r.DeepCopy()
	}
	return s.saveLocked()
}

// setActuated records what was applied to a container's running instance.
func (s *allocationStore) setActuated(uid types.UID, name string, r v1.ResourceRequirements) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.pods[uid]
	if !ok {
		a = &podAllocation{Allocated: map[string]v1.ResourceRequirements{}}
		s.pods[uid] = a
	}
	if old, ok := a.Actuated[name]; ok && equality.Semantic.DeepEqual(old, r) {
		return nil
	}
	if a.Actuated == nil {
		a.Actuated = map[string]v1.ResourceRequirements{}
	}
	a.Actuated[name] = *r.DeepCopy()
	return s.saveLocked()
}

// remove forgets a pod that is gone.
func (s *allocationStore) remove(uid types.UID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.pods[uid]; !ok {
		return nil
	}
	delete(s.pods, uid)
	return s.saveLocked()
}

// keepOnly forgets every pod not in keep (pods deleted while vk-cri was not running).
func (s *allocationStore) keepOnly(keep map[types.UID]bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	changed := false
	for uid := range s.pods {
		if !keep[uid] {
			delete(s.pods, uid)
			changed = true
		}
	}
	if !changed {
		return nil
	}
	return s.saveLocked()
}

func (s *allocationStore) saveLocked() error {
	data, err := encodeAllocationCheckpoint(s.pods)
	if err != nil {
		return err
	}
	dir := filepath.Dir(s.path)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("allocation store directory: %w", err)
	}
	tmp, err := os.CreateTemp(dir, filepath.Base(s.path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing the allocation store: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("writing the allocation store: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("syncing the allocation store: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing the allocation store: %w", err)
	}
	if err := os.Rename(tmp.Name(), s.path); err != nil {
		return fmt.Errorf("replacing the allocation store: %w", err)
	}
	// The rename is durable once the directory is: without this a crash can bring the old
	// file back (or none) after the new state was acted on.
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("syncing the allocation store's directory: %w", err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		d.Close()
		return err
	}
	return d.Close()
}
