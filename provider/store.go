package provider

import (
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vk-cri/vk-cri/provider/status"
)

// podRecord is vk-cri's view of one pod, keyed by UID. Its worker is the only writer of
// status and reasons; API calls only set the spec and the deletion request, then wake it.
type podRecord struct {
	uid      types.UID
	identity podIdentity

	mu sync.Mutex
	// pod is the spec the API gave; nil for a pod found in the runtime at start-up and not yet
	// claimed by the API (a restart of vk-cri).
	pod    *v1.Pod
	status *v1.PodStatus
	// apiConditions are the conditions of the pod in the API that the kubelet does not own
	// (readiness gates ...), as last seen there; nil until the API gave the pod.
	apiConditions []v1.PodCondition
	reasons       map[string]waitingReason
	// lifecycle is where the pod is in its life (syncing, terminating, terminated, removed) and
	// why it ended: changed only through its transition and requestDeletion (pod_lifecycle.go).
	lifecycle podLifecycle
	// firstSeen is when the API first gave vk-cri the pod (zero for a pod found in the runtime
	// at start-up), the start of kubelet_pod_start_duration_seconds.
	firstSeen time.Time
	// probeWake is set when a readiness or startup verdict asked for this sync.
	probeWake bool
	// relistWake is set when the relister saw the pod's runtime state change.
	relistWake bool
	// cadence is where the pod stands in the kubelet's sync cadence (cadence.go).
	cadence syncCadence
	// resize holds the pod's resize conditions; resizeLoaded is set once they were taken from
	// the status reported before (by a vk-cri that restarted since).
	resize       resizeConditions
	resizeLoaded bool
	// cancelSync, while a sync runs, interrupts it (a postStart hook, an image pull) when the
	// pod is to be deleted, as the kubelet's pod workers do.
	cancelSync func()

	wake chan struct{}
	done chan struct{}
}

func newPodRecord(id podIdentity, pod *v1.Pod) *podRecord {
	r := &podRecord{
		uid:      types.UID(id.UID),
		identity: id,
		pod:      pod,
		reasons:  map[string]waitingReason{},
		wake:     make(chan struct{}, 1),
		done:     make(chan struct{}),
	}
	if pod != nil {
		r.firstSeen = time.Now()
		r.status = pod.Status.DeepCopy()
		r.apiConditions = status.ForeignConditions(pod.Status.Conditions)
		r.claimedTerminal(pod)
	}
	return r
}

// claimedTerminal marks a pod the API gives in a terminal phase already (it ended before vk-cri
// restarted) as terminated: it never runs again. The record's lock is held or not needed yet.
func (r *podRecord) claimedTerminal(pod *v1.Pod) {
	if isTerminalPhase(pod.Status.Phase) && r.lifecycle.state == podSyncing {
		// Always an arrow of the drawing: syncing → terminated for a pod already terminal.
		_ = r.lifecycle.transition(lifecycleChange{to: podTerminated, reason: terminationFinished})
	}
}

// lifecycleNow is a copy of the pod's lifecycle, taken under the record's lock.
func (r *podRecord) lifecycleNow() podLifecycle {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lifecycle
}

// transition changes the pod's lifecycle along one arrow (podLifecycle.transition), under the
// record's lock.
func (r *podRecord) transition(c lifecycleChange) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lifecycle.transition(c)
}

// poke asks the worker for a sync without blocking.
func (r *podRecord) poke() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// view returns the pod as the provider reports it: the API's spec with our status.
func (r *podRecord) view() *v1.Pod {
	r.mu.Lock()
	defer r.mu.Unlock()
	var p *v1.Pod
	if r.pod != nil {
		p = r.pod.DeepCopy()
	} else {
		p = &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: r.identity.Namespace, Name: r.identity.Name, UID: r.uid}}
	}
	if r.status != nil {
		p.Status = *r.status.DeepCopy()
	}
	return p
}

func isTerminalPhase(p v1.PodPhase) bool {
	return p == v1.PodSucceeded || p == v1.PodFailed
}

// podStore holds the records of every pod this node runs.
type podStore struct {
	mu   sync.Mutex
	byID map[types.UID]*podRecord
}

func newPodStore() *podStore {
	return &podStore{byID: map[types.UID]*podRecord{}}
}

func (s *podStore) get(uid types.UID) (*podRecord, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.byID[uid]
	return r, ok
}

// add stores r unless a record with its UID exists; it returns the stored record and
// whether it was added.
func (s *podStore) add(r *podRecord) (*podRecord, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.byID[r.uid]; ok {
		return old, false
	}
	s.byID[r.uid] = r
	return r, true
}

func (s *podStore) remove(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byID, uid)
}

func (s *podStore) list() []*podRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*podRecord, 0, len(s.byID))
	for _, r := range s.byID {
		out = append(out, r)
	}
	return out
}

// byName returns the records of a namespace/name, which may hold an old pod still being torn
// down beside its successor.
func (s *podStore) byName(namespace, name string) []*podRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*podRecord
	for _, r := range s.byID {
		if r.identity.Namespace == namespace && r.identity.Name == name {
			out = append(out, r)
		}
	}
	return out
}
