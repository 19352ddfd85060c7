package objectcache

import (
	"context"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// defaultSyncWait is how long a read waits for a new watch's first list before it asks the API
// server instead (the kubelet waits up to a second too, then fails the read).
const defaultSyncWait = time.Second

// objectWatch is one object followed by a watch of its own (a field selector on its name).
type objectWatch struct {
	store  cache.Store
	synced func() bool
	cancel context.CancelFunc
	// pods refer to the object; true for those whose volumes read it.
	pods map[types.UID]bool
	// stopped is set once the object was read immutable: like the kubelet, the watch ends and
	// the object is served as last seen.
	stopped bool
}

// Cache follows the objects registered pods refer to and serves reads of them from its watches;
// objects no registered pod refers to are read from the API server.
type Cache struct {
	ctx      context.Context
	client   kubernetes.Interface
	direct   Direct
	changed  func(types.UID)
	syncWait time.Duration

	mu      sync.Mutex
	watches map[Key]*objectWatch
	byPod   map[types.UID]references
}

// Option configures a Cache.
type Option func(*Cache)

// WithVolumeChanges calls changed with each pod whose volumes read an object that changed (or
// appeared, or went), so that the pod is synced and its volumes refreshed at once. Objects that
// only env or imagePullSecrets refer to are read at the next container start, as with the
// kubelet.
func WithVolumeChanges(changed func(types.UID)) Option {
	return func(c *Cache) { c.changed = changed }
}

// WithSyncWait sets how long a read waits for a new watch's first list (tests).
func WithSyncWait(d time.Duration) Option { return func(c *Cache) { c.syncWait = d } }

// New returns a cache whose watches run until ctx ends.
func New(ctx context.Context, client kubernetes.Interface, opts ...Option) *Cache {
	c := &Cache{ctx: ctx, client: client, direct: Direct{Client: client}, syncWait: defaultSyncWait,
		watches: map[Key]*objectWatch{}, byPod: map[types.UID]references{}}
	for _, o := range opts {
		o(c)
	}
	return c
}

// RegisterPod makes the cache follow exactly the objects the pod refers to now: new ones get a
// watch, ones no registered pod refers to any more lose theirs. It is cheap when nothing changed
// and is called on each sync of the pod.
func (c *Cache) RegisterPod(pod *v1.Pod) {
	c.follow(pod.UID, podReferences(pod))
}

// UnregisterPod releases the pod's references (once it has terminated).
func (c *Cache) UnregisterPod(uid types.UID) {
	c.follow(uid, nil)
}

func (c *Cache) follow(uid types.UID, refs references) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.byPod[uid] {
		if _, keep := refs[k]; !keep {
			c.releaseLocked(uid, k)
		}
	}
	for k, volume := range refs {
		ow, ok := c.watches[k]
		if !ok {
			ow = c.startLocked(k)
			c.watches[k] = ow
		}
		ow.pods[uid] = volume
	}
	if len(refs) == 0 {
		delete(c.byPod, uid)
		return
	}
	c.byPod[uid] = refs
}

func (c *Cache) releaseLocked(uid types.UID, k Key) {
	ow, ok := c.watches[k]
	if !ok {
		return
	}
	delete(ow.pods, uid)
	if len(ow.pods) == 0 {
		ow.cancel()
		delete(c.watches, k)
	}
}

func (c *Cache) startLocked(k Key) *objectWatch {
	ctx, cancel := context.WithCancel(c.ctx)
	var lw cache.ListerWatcher
	var obj runtime.Object
	switch k.Kind {
	case KindConfigMap:
		obj, lw = &v1.ConfigMap{}, namedListWatch(c.client, k.Name, c.client.CoreV1().ConfigMaps(k.Namespace))
	default:
		obj, lw = &v1.Secret{}, namedListWatch(c.client, k.Name, c.client.CoreV1().Secrets(k.Namespace))
	}
	notify := func() { c.notify(k) }
	store, ctrl := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw,
		ObjectType:    obj,
		Handler: cache.ResourceEventHandlerDetailedFuncs{
			AddFunc: func(_ any, initial bool) {
				if !initial { // an object that appears (a missing ConfigMap created)
					notify()
				}
			},
			UpdateFunc: func(_, _ any) { notify() },
			DeleteFunc: func(any) { notify() },
		},
	})
	go ctrl.RunWithContext(ctx)
	return &objectWatch{store: store, synced: ctrl.HasSynced, cancel: cancel, pods: map[types.UID]bool{}}
}

func (c *Cache) notify(k Key) {
	if c.changed == nil {
		return
	}
	c.mu.Lock()
	var uids []types.UID
	if ow, ok := c.watches[k]; ok {
		for uid, volume := range ow.pods {
			if volume {
				uids = append(uids, uid)
			}
		}
	}
	c.mu.Unlock()
	for _, uid := range uids {
		c.changed(uid)
	}
}

// Watched lists the objects the cache follows now.
func (c *Cache) Watched() []Key {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Key, 0, len(c.watches))
	for k := range c.watches {
		out = append(out, k)
	}
	return out
}

// cached returns the object from its watch's cache, waiting up to syncWait for the watch's
// first list; ok is false when no registered pod refers to the object or the list did not come
// in time (the caller then asks the API server).
func (c *Cache) cached(ctx context.Context, k Key) (obj any, found, ok bool) {
	c.mu.Lock()
	ow, exists := c.watches[k]
	c.mu.Unlock()
	if !exists || !waitSynced(ctx, ow.synced, c.syncWait) {
		return nil, false, false
	}
	obj, found, err := ow.store.GetByKey(k.Namespace + "/" + k.Name)
	if err != nil {
		return nil, false, false
	}
	if found && isImmutable(obj) {
		c.mu.Lock()
		if !ow.stopped {
			ow.stopped = true
			ow.cancel()
		}
		c.mu.Unlock()
	}
	return obj, found, true
}

// isImmutable reports whether a ConfigMap or Secret can no longer change (only be deleted).
func isImmutable(obj any) bool {
	switch o := obj.(type) {
	case *v1.ConfigMap:
		return o.Immutable != nil && *o.Immutable
	case *v1.Secret:
		return o.Immutable != nil && *o.Immutable
	}
	return false
}

// waitSynced polls synced until it is true, d has passed or ctx ends.
func waitSynced(ctx context.Context, synced func() bool, d time.Duration) bool {
	if synced() {
		return true
	}
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-deadline.C:
			return synced()
		case <-tick.C:
			if synced() {
				return true
			}
		}
	}
}

// ConfigMap returns the ConfigMap from its watch when a registered pod refers to it, else from
// the API server. A missing one is a NotFound error worded as the kubelet's
// (`configmap "name" not found`).
func (c *Cache) ConfigMap(ctx context.Context, namespace, name string) (*v1.ConfigMap, error) {
	obj, found, ok := c.cached(ctx, Key{Kind: KindConfigMap, Namespace: namespace, Name: name})
	switch {
	case !ok:
		return c.direct.ConfigMap(ctx, namespace, name)
	case !found:
		return nil, notFound(KindConfigMap, name)
	}
	return obj.(*v1.ConfigMap), nil
}

// Secret returns the Secret from its watch when a registered pod refers to it, else from the
// API server. A missing one is a NotFound error worded as the kubelet's.
func (c *Cache) Secret(ctx context.Context, namespace, name string) (*v1.Secret, error) {
	obj, found, ok := c.cached(ctx, Key{Kind: KindSecret, Namespace: namespace, Name: name})
	switch {
	case !ok:
		return c.direct.Secret(ctx, namespace, name)
	case !found:
		return nil, notFound(KindSecret, name)
	}
	return obj.(*v1.Secret), nil
}
