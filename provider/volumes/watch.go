package volumes

import (
	"context"
	"sync"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

type objectKind string

const (
	kindConfigMap objectKind = "configmap"
	kindSecret    objectKind = "secret"
)

// objectKey names a ConfigMap or Secret a pod's volumes read.
type objectKey struct {
	Kind            objectKind
	Namespace, Name string
}

// volumeObjects lists the ConfigMaps and Secrets the pod's volumes read.
func volumeObjects(pod *v1.Pod) []objectKey {
	var out []objectKey
	add := func(k objectKind, name string) {
		out = append(out, objectKey{Kind: k, Namespace: pod.Namespace, Name: name})
	}
	for i := range pod.Spec.Volumes {
		src := &pod.Spec.Volumes[i].VolumeSource
		switch {
		case src.ConfigMap != nil:
			add(kindConfigMap, src.ConfigMap.Name)
		case src.Secret != nil:
			add(kindSecret, src.Secret.SecretName)
		case src.Projected != nil:
			for _, s := range src.Projected.Sources {
				if s.ConfigMap != nil {
					add(kindConfigMap, s.ConfigMap.Name)
				}
				if s.Secret != nil {
					add(kindSecret, s.Secret.Name)
				}
			}
		}
	}
	return out
}

// objectWatch is one object followed by a watch of its own (a field selector on its name), as
// the kubelet's watch-based ConfigMap and Secret managers do: no list of every object.
type objectWatch struct {
	store  cache.Store
	synced func() bool
	cancel context.CancelFunc
	pods   map[types.UID]bool
}

// objectWatcher follows the objects pods' volumes read, serves them from its caches, and tells
// changed(uid) for each pod whose object changed, so that updates reach pods at once.
type objectWatcher struct {
	ctx     context.Context
	client  kubernetes.Interface
	changed func(types.UID)

	mu      sync.Mutex
	watches map[objectKey]*objectWatch
	byPod   map[types.UID][]objectKey
}

func newObjectWatcher(ctx context.Context, client kubernetes.Interface, changed func(types.UID)) *objectWatcher {
	return &objectWatcher{ctx: ctx, client: client, changed: changed,
		watches: map[objectKey]*objectWatch{}, byPod: map[types.UID][]objectKey{}}
}

// follow makes the watcher follow exactly keys for the pod: new objects get a watch, objects no
// pod reads any more lose theirs.
func (w *objectWatcher) follow(uid types.UID, keys []objectKey) {
	w.mu.Lock()
	defer w.mu.Unlock()
	want := map[objectKey]bool{}
	for _, k := range keys {
		want[k] = true
	}
	for _, k := range w.byPod[uid] {
		if !want[k] {
			w.release(uid, k)
		}
	}
	for k := range want {
		ow, ok := w.watches[k]
		if !ok {
			ow = w.start(k)
			w.watches[k] = ow
		}
		ow.pods[uid] = true
	}
	if len(keys) == 0 {
		delete(w.byPod, uid)
		return
	}
	w.byPod[uid] = keys
}

func (w *objectWatcher) release(uid types.UID, k objectKey) {
	ow, ok := w.watches[k]
	if !ok {
		return
	}
	delete(ow.pods, uid)
	if len(ow.pods) == 0 {
		ow.cancel()
		delete(w.watches, k)
	}
}

func (w *objectWatcher) start(k objectKey) *objectWatch {
	ctx, cancel := context.WithCancel(w.ctx)
	var lw cache.ListerWatcher
	var obj runtime.Object
	switch k.Kind {
	case kindConfigMap:
		obj, lw = &v1.ConfigMap{}, namedListWatch(w.client, k.Name, w.client.CoreV1().ConfigMaps(k.Namespace))
	default:
		obj, lw = &v1.Secret{}, namedListWatch(w.client, k.Name, w.client.CoreV1().Secrets(k.Namespace))
	}
	notify := func() { w.notify(k) }
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

func (w *objectWatcher) notify(k objectKey) {
	w.mu.Lock()
	var uids []types.UID
	if ow, ok := w.watches[k]; ok {
		for uid := range ow.pods {
			uids = append(uids, uid)
		}
	}
	w.mu.Unlock()
	for _, uid := range uids {
		w.changed(uid)
	}
}

// cached returns the object from its watch's cache; ok is false until the watch has listed it
// once (the caller then asks the API server).
func (w *objectWatcher) cached(k objectKey) (obj any, found, ok bool) {
	w.mu.Lock()
	ow, exists := w.watches[k]
	w.mu.Unlock()
	if !exists || !ow.synced() {
		return nil, false, false
	}
	obj, found, err := ow.store.GetByKey(k.Namespace + "/" + k.Name)
	if err != nil {
		return nil, false, false
	}
	return obj, found, true
}

// listWatcher is what a typed namespaced client offers for a list+watch.
type listWatcher[L runtime.Object] interface {
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// namedListWatch lists and watches the one object called name through c.
func namedListWatch[L runtime.Object](client kubernetes.Interface, name string, c listWatcher[L]) cache.ListerWatcher {
	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	return cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = sel
			return c.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel
			return c.Watch(ctx, o)
		},
	}, client)
}
