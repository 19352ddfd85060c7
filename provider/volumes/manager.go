package volumes

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/mount-utils"

	"github.com/vk-cri/vk-cri/provider/objectcache"
)

// apiTimeout bounds each API call a volume makes.
const apiTimeout = 10 * time.Second

// Manager sets up, refreshes and tears down the volumes of the pods on the node.
type Manager struct {
	layout layout
	client kubernetes.Interface
	// mounter reads the mount table (List, IsMountPoint); it runs no program for that.
	mounter mount.Interface
	// calls makes and takes away mounts: tmpfs volumes, subPath binds from the descriptors they
	// were checked with, unmounts.
	calls          mountCalls
	forbidHostPath bool
	noswap         bool
	allocatable    func() v1.ResourceList
	now            func() time.Time
	jitter         func(time.Duration, float64) time.Duration
	log            *logrus.Entry
	store          *store
	// objects reads the ConfigMaps and Secrets volumes show; without WithObjects, the API
	// server at each refresh.
	objects ObjectReader
}

// ObjectReader reads ConfigMaps and Secrets; a missing one is a NotFound error.
// provider/objectcache implements it.
type ObjectReader interface {
	ConfigMap(ctx context.Context, namespace, name string) (*v1.ConfigMap, error)
	Secret(ctx context.Context, namespace, name string) (*v1.Secret, error)
}

// Option configures a Manager.
type Option func(*Manager)

// WithClient gives the API client that reads ConfigMaps, Secrets, claims and requests tokens.
func WithClient(c kubernetes.Interface) Option { return func(m *Manager) { m.client = c } }

// WithMounter replaces the system mounter (tests use mount-utils' fake); tmpfs volumes,
// subPath binds and unmounts then go through it too instead of mount(2) and umount(2).
func WithMounter(mt mount.Interface) Option {
	return func(m *Manager) {
		m.mounter = mt
		m.calls = mounterCalls{mounter: mt}
	}
}

// WithForbidHostPath refuses hostPath volumes and claims bound to hostPath or local volumes.
func WithForbidHostPath(forbid bool) Option { return func(m *Manager) { m.forbidHostPath = forbid } }

// WithAllocatable gives the node's allocatable resources: the size of memory-backed volumes
// of pods without memory limits, and the value of resourceFieldRef limits not set.
func WithAllocatable(f func() v1.ResourceList) Option { return func(m *Manager) { m.allocatable = f } }

// WithObjects reads ConfigMaps and Secrets through objects (the node's watch-backed cache)
// instead of the API server.
func WithObjects(objects ObjectReader) Option { return func(m *Manager) { m.objects = objects } }

// WithClock replaces time.Now (tests).
func WithClock(now func() time.Time) Option { return func(m *Manager) { m.now = now } }

// WithJitter replaces wait.Jitter, which spreads claim retries (tests).
func WithJitter(j func(time.Duration, float64) time.Duration) Option {
	return func(m *Manager) { m.jitter = j }
}

// WithLogger sets the logger.
func WithLogger(l *logrus.Entry) Option { return func(m *Manager) { m.log = l } }

// New returns a manager keeping pod directories under rootDir/pods. The root dir is used by its
// real path (without symlinks), the one the mount table shows, so that teardown finds every
// mount it made.
func New(rootDir string, opts ...Option) *Manager {
	if err := os.MkdirAll(rootDir, 0o750); err == nil {
		if real, err := filepath.EvalSymlinks(rootDir); err == nil {
			rootDir = real
		}
	}
	m := &Manager{
		layout:  layout{root: rootDir},
		mounter: mount.NewWithoutSystemd(""),
		calls:   syscallMounts{},
		noswap:  noswapSupported(),
		now:     time.Now,
		jitter:  wait.Jitter,
		log:     logrus.NewEntry(logrus.StandardLogger()),
		store:   newStore(),
	}
	for _, o := range opts {
		o(m)
	}
	if m.objects == nil && m.client != nil {
		m.objects = objectcache.Direct{Client: m.client}
	}
	return m
}

// SetUpError is a volume that could not be set up or refreshed.
type SetUpError struct {
	Volume string
	Err    error
	// Blocking is set when the volume was never set up: the pod's containers cannot start.
	Blocking bool
}

// Error is the kubelet's FailedMount event message.
func (e *SetUpError) Error() string {
	return fmt.Sprintf("MountVolume.SetUp failed for volume %q : %v", e.Volume, e.Err)
}

func (e *SetUpError) Unwrap() error { return e.Err }

// UnprocessedError is the pod's volumes the kubelet could not even start to mount (claims it
// cannot resolve): its pod-level FailedMount event.
type UnprocessedError struct {
	// Unmounted is every volume the containers use that is not set up yet, sorted.
	Unmounted []string
	// Unprocessed is the volumes that failed, sorted; Errs their errors, sorted.
	Unprocessed []string
	Errs        []string
}

func (e *UnprocessedError) Error() string {
	// Nothing is ever attached by vk-cri: the kubelet's "unattached volumes" list stays empty.
	return fmt.Sprintf("Unable to attach or mount volumes: unmounted volumes=%v, unattached volumes=[], failed to process volumes=%v: %s",
		e.Unmounted, e.Unprocessed, strings.Join(e.Errs, "; "))
}

// SetUpResult is what one SetUp call did.
type SetUpResult struct {
	// Failed is each volume whose set-up or refresh failed in this call: one FailedMount event each.
	Failed []*SetUpError
	// Unprocessed, when set, is the claims that could not be resolved: one FailedMount event.
	Unprocessed *UnprocessedError
	// Waiting is set while a volume the pod never had is missing: its containers cannot start.
	Waiting bool
	// RetryIn is when the first volume that failed may be tried again (0: none failed).
	RetryIn time.Duration
}

// PodDir is the pod's directory under the root dir, for files other parts of vk-cri keep per pod.
func (m *Manager) PodDir(pod *v1.Pod) string { return m.layout.podDir(pod.UID) }

// SetUp makes every volume of the pod present and current: the first call creates them, later
// calls bring API-backed contents up to date (atomically, as the kubelet does). A volume that
// failed is tried again only once its retry is due, on the kubelet's schedule (mountRetry,
// claimRetry); until then it is skipped without an error.
func (m *Manager) SetUp(ctx context.Context, pod *v1.Pod) SetUpResult {
	var res SetUpResult
	if len(pod.Spec.Volumes) == 0 {
		return res
	}
	if err := os.MkdirAll(m.layout.podDir(pod.UID), 0o750); err != nil {
		res.Failed = []*SetUpError{{Volume: pod.Spec.Volumes[0].Name, Err: fmt.Errorf("creating pod directory: %w", err), Blocking: true}}
		res.Waiting, res.RetryIn = true, mountRetry().Initial
		return res
	}
	now := m.now()
	unprocessed := map[string]string{}
	used := usedVolumeSet(pod)
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		if !used[vol.Name] {
			// Like the kubelet, a volume no container mounts is not set up: a missing object
			// behind it does not keep the pod from starting.
			continue
		}
		_, had := m.store.volume(pod.UID, vol.Name)
		before, failed := m.store.retry(pod.UID, vol.Name)
		if failed && now.Before(before.Due) {
			res.waitFor(before.Due.Sub(now), !had)
			continue
		}
		mv, err := m.setUpVolume(ctx, pod, vol)
		if err == nil {
			m.store.setRetry(pod.UID, vol.Name, retryState{})
			m.store.setVolume(pod.UID, vol.Name, mv)
			continue
		}
		policy := mountRetry()
		var claimErr *ClaimError
		if errors.As(err, &claimErr) {
			policy = claimRetry()
			unprocessed[vol.Name] = claimErr.Error()
		} else {
			res.Failed = append(res.Failed, &SetUpError{Volume: eventVolumeName(vol.Name, err), Err: err, Blocking: !had})
		}
		after := policy.afterFailure(before, now, m.jitter)
		m.store.setRetry(pod.UID, vol.Name, after)
		res.waitFor(after.Due.Sub(now), !had)
	}
	if len(unprocessed) > 0 {
		res.Unprocessed = m.unprocessedError(pod, unprocessed)
	}
	return res
}

// waitFor notes a volume that waits d for its next attempt; blocking when the pod never had it.
func (r *SetUpResult) waitFor(d time.Duration, blocking bool) {
	if r.RetryIn == 0 || d < r.RetryIn {
		r.RetryIn = d
	}
	r.Waiting = r.Waiting || blocking
}

// eventVolumeName is the volume an event names: a claim's persistent volume, as the kubelet names it.
func eventVolumeName(name string, err error) string {
	var pvErr *persistentVolumeError
	if errors.As(err, &pvErr) {
		return pvErr.PV
	}
	return name
}

// unprocessedError lists, as the kubelet does, the volumes the containers use that are not set
// up and the claims that failed (errs by volume name).
func (m *Manager) unprocessedError(pod *v1.Pod, errs map[string]string) *UnprocessedError {
	out := &UnprocessedError{Unmounted: []string{}}
	for _, name := range usedVolumes(pod) {
		if _, ok := m.store.volume(pod.UID, name); !ok {
			out.Unmounted = append(out.Unmounted, name)
		}
	}
	for name, msg := range errs {
		out.Unprocessed = append(out.Unprocessed, name)
		out.Errs = append(out.Errs, msg)
	}
	sort.Strings(out.Unprocessed)
	sort.Strings(out.Errs)
	return out
}

// usedVolumes is the names of the pod's volumes that a container mounts, sorted.
func usedVolumes(pod *v1.Pod) []string {
	used := usedVolumeSet(pod)
	var out []string
	for i := range pod.Spec.Volumes {
		if used[pod.Spec.Volumes[i].Name] {
			out = append(out, pod.Spec.Volumes[i].Name)
		}
	}
	sort.Strings(out)
	return out
}

// usedVolumeSet is the names of the volumes that the pod's containers (init, regular and
// ephemeral) mount.
func usedVolumeSet(pod *v1.Pod) map[string]bool {
	used := map[string]bool{}
	for _, cs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			for _, vm := range cs[i].VolumeMounts {
				used[vm.Name] = true
			}
		}
	}
	for i := range pod.Spec.EphemeralContainers {
		for _, vm := range pod.Spec.EphemeralContainers[i].VolumeMounts {
			used[vm.Name] = true
		}
	}
	return used
}

func (m *Manager) setUpVolume(ctx context.Context, pod *v1.Pod, vol *v1.Volume) (*mountedVolume, error) {
	src := &vol.VolumeSource
	switch {
	case src.EmptyDir != nil:
		return m.setUpEmptyDir(pod, vol.Name, src.EmptyDir)
	case src.ConfigMap != nil:
		return m.setUpConfigMap(ctx, pod, vol.Name, src.ConfigMap)
	case src.Secret != nil:
		return m.setUpSecret(ctx, pod, vol.Name, src.Secret)
	case src.DownwardAPI != nil:
		return m.setUpDownwardAPI(pod, vol.Name, src.DownwardAPI)
	case src.Projected != nil:
		return m.setUpProjected(ctx, pod, vol.Name, src.Projected)
	case src.HostPath != nil:
		return m.setUpHostPath(src.HostPath)
	case src.PersistentVolumeClaim != nil:
		return m.setUpClaim(ctx, pod, vol.Name, src.PersistentVolumeClaim)
	default:
		return nil, fmt.Errorf("volume type not supported by vk-cri")
	}
}

// memoryVolumeSize is the size of a memory-backed volume as the kubelet computes it: the node's
// allocatable memory, lowered to the pod's memory limit and to the volume's sizeLimit.
func (m *Manager) memoryVolumeSize(pod *v1.Pod, sizeLimit *resource.Quantity) *resource.Quantity {
	var size *resource.Quantity
	if m.allocatable != nil {
		if q, ok := m.allocatable()[v1.ResourceMemory]; ok && !q.IsZero() {
			size = &q
		}
	}
	lower := func(q *resource.Quantity) {
		if q != nil && q.Sign() > 0 && (size == nil || q.Cmp(*size) < 0) {
			size = q
		}
	}
	lower(podMemoryLimit(pod))
	lower(sizeLimit)
	return size
}
