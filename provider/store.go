package provider

import (
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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
	deleting      bool
	gracePeriod   int64
	// deletedInAPI is set when the API asked for the deletion (the pod has a deletion
	// timestamp there), so the pod is removed from the API once terminated.
	deletedInAPI bool
	// goneFromAPI is set when the pod was removed from the API before vk-cri stopped it (a
	// force deletion): the kubelet records no Killing events then.
	goneFromAPI bool
	// deletionSeen is the pod's status in the API when vk-cri first saw its deletion
	// timestamp: what the kubelet's pod worker holds of the pod once it is deleted, from which
	// its status manager judges at the end whether the pod had initialised. Nil until then.
	deletionSeen *v1.PodStatus
	// orphan is set when the pod is deleted while vk-cri knows it only from the runtime (found
	// there at start-up, absent from the API): it is killed as the kubelet kills orphans.
	orphan bool
	// finished is set once the pod reached Succeeded or Failed and its sandbox was stopped.
	finished bool
	// rejected is set when the node's admission refused the pod: its status stays the
	// rejection's.
	rejected bool
	// evicted is set when the eviction manager evicts the pod.
	evicted *eviction
	// firstSeen is when the API first gave vk-cri the pod (zero for a pod found in the runtime
	// at start-up), the start of kubelet_pod_start_duration_seconds.
	firstSeen time.Time
	// probeWake is set when a readiness or startup verdict asked for this sync.
	probeWake bool
	// relistWake is set when the relister saw the pod's runtime state change.
	relistWake bool
	// cadence is where the pod stands in the kubelet's sync cadence (cadence.go).
	cadence syncCadence
	// failure is set when vk-cri ended the pod Failed itself (its active deadline passed).
	failure *podFailure
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
		r.apiConditions = foreignConditions(pod.Status.Conditions)
		r.finished = isTerminalPhase(pod.Status.Phase)
	}
	return r
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
