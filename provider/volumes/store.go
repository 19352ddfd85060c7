package volumes

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
)

// mountedVolume is one volume a pod has on the node.
type mountedVolume struct {
	// Path is the host path containers mount.
	Path string
	// ReadOnly is set for volumes whose content the node manages (configMap, secret, ...):
	// containers always get them read-only, as with the kubelet.
	ReadOnly bool
	// Tmpfs is set when Path is a tmpfs the manager mounted.
	Tmpfs bool
	// SizeLimit is an emptyDir's sizeLimit, checked for eviction.
	SizeLimit *resource.Quantity
}

// issuedToken is a service-account token written into a projected volume.
type issuedToken struct {
	Token     string
	IssuedAt  time.Time
	ExpiresAt time.Time
}

// podVolumes is what one pod has mounted.
type podVolumes struct {
	volumes map[string]*mountedVolume
	// tokens are keyed by volume name and path in the volume.
	tokens map[string]issuedToken
	// retries are the volumes whose last set-up failed, by name.
	retries map[string]retryState
}

// store records what each pod has mounted, so that containers get the right host paths and
// teardown knows what to undo.
type store struct {
	mu   sync.Mutex
	pods map[types.UID]*podVolumes
}

func newStore() *store { return &store{pods: map[types.UID]*podVolumes{}} }

func (s *store) volume(uid types.UID, name string) (*mountedVolume, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pv, ok := s.pods[uid]
	if !ok {
		return nil, false
	}
	v, ok := pv.volumes[name]
	return v, ok
}

func (s *store) setVolume(uid types.UID, name string, v *mountedVolume) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.podLocked(uid).volumes[name] = v
}

func (s *store) token(uid types.UID, key string) (issuedToken, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pv, ok := s.pods[uid]
	if !ok {
		return issuedToken{}, false
	}
	t, ok := pv.tokens[key]
	return t, ok
}

func (s *store) setToken(uid types.UID, key string, t issuedToken) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.podLocked(uid).tokens[key] = t
}

// retry is the retry state of a volume whose last set-up failed.
func (s *store) retry(uid types.UID, name string) (retryState, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pv, ok := s.pods[uid]
	if !ok {
		return retryState{}, false
	}
	r, ok := pv.retries[name]
	return r, ok
}

// setRetry records a failed set-up; a zero state (after a success) forgets it.
func (s *store) setRetry(uid types.UID, name string, r retryState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r == (retryState{}) {
		if pv, ok := s.pods[uid]; ok {
			delete(pv.retries, name)
		}
		return
	}
	s.podLocked(uid).retries[name] = r
}

func (s *store) podLocked(uid types.UID) *podVolumes {
	pv, ok := s.pods[uid]
	if !ok {
		pv = &podVolumes{volumes: map[string]*mountedVolume{}, tokens: map[string]issuedToken{}, retries: map[string]retryState{}}
		s.pods[uid] = pv
	}
	return pv
}

// volumes returns a copy of the pod's mounted volumes.
func (s *store) volumes(uid types.UID) map[string]mountedVolume {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]mountedVolume{}
	if pv, ok := s.pods[uid]; ok {
		for n, v := range pv.volumes {
			out[n] = *v
		}
	}
	return out
}

func (s *store) forget(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pods, uid)
}
