package provider

import (
	"encoding/json"
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

// allocationVersion tags the file's layout.
const allocationVersion = 1

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

// load reads the store's file; a missing file is an empty store. An unreadable one is an
// error: starting empty would take the spec's resources for the allocated ones.
func (s *allocationStore) load() error {
	data, err := os.ReadFile(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the allocation store: %w", err)
	}
	var st allocationState
	if err := json.Unmarshal(data, &st); err != nil {
		return fmt.Errorf("decoding the allocation store %s: %w", s.path, err)
	}
	if st.Version != allocationVersion {
		return fmt.Errorf("allocation store %s: version %d, want %d", s.path, st.Version, allocationVersion)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if st.Pods != nil {
		s.pods = st.Pods
	}
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
	data, err := json.Marshal(allocationState{Version: allocationVersion, Pods: s.pods})
	if err != nil {
		return fmt.Errorf("encoding the allocation store: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o750); err != nil {
		return fmt.Errorf("allocation store directory: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.path), filepath.Base(s.path)+".tmp-*")
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
	return nil
}
