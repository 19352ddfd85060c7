package main

import (
	"context"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// withoutClusterWideSecrets is the client virtual-kubelet's nodeutil gets. nodeutil.NewNode
// starts informers on every Secret and ConfigMap of the cluster (for its resource manager, which
// vk-cri does not use: it resolves env and volumes itself, through package objectcache, one watch
// per object a pod names, as the kubelet's watch-based managers do). The Node authorizer refuses
// a node such lists; rather than grant them, these lists come back empty and their watches stay
// silent. Everything else, reads of single objects included, goes to the API as it is.
func withoutClusterWideSecrets(c kubernetes.Interface) kubernetes.Interface {
	return nodeScopedClientset{Interface: c}
}

type nodeScopedClientset struct{ kubernetes.Interface }

// IsWatchListSemanticsUnSupported passes on the wrapped client's answer (a fake clientset's),
// which the informers' reflectors ask for.
func (c nodeScopedClientset) IsWatchListSemanticsUnSupported() bool {
	u, ok := c.Interface.(interface{ IsWatchListSemanticsUnSupported() bool })
	return ok && u.IsWatchListSemanticsUnSupported()
}

func (c nodeScopedClientset) CoreV1() corev1client.CoreV1Interface {
	return nodeScopedCoreV1{CoreV1Interface: c.Interface.CoreV1()}
}

type nodeScopedCoreV1 struct{ corev1client.CoreV1Interface }

func (c nodeScopedCoreV1) Secrets(namespace string) corev1client.SecretInterface {
	return noSecretList{SecretInterface: c.CoreV1Interface.Secrets(namespace)}
}

func (c nodeScopedCoreV1) ConfigMaps(namespace string) corev1client.ConfigMapInterface {
	return noConfigMapList{ConfigMapInterface: c.CoreV1Interface.ConfigMaps(namespace)}
}

type noSecretList struct{ corev1client.SecretInterface }

func (noSecretList) List(context.Context, metav1.ListOptions) (*v1.SecretList, error) {
	return &v1.SecretList{}, nil
}

func (noSecretList) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return silentWatch(ctx, opts, &v1.Secret{}), nil
}

type noConfigMapList struct {
	corev1client.ConfigMapInterface
}

func (noConfigMapList) List(context.Context, metav1.ListOptions) (*v1.ConfigMapList, error) {
	return &v1.ConfigMapList{}, nil
}

func (noConfigMapList) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return silentWatch(ctx, opts, &v1.ConfigMap{}), nil
}

// silentWatch delivers no object and ends when stopped or when ctx ends. A watch that streams
// the initial list (client-go's watch-list) gets at once the bookmark that ends that empty list.
func silentWatch(ctx context.Context, opts metav1.ListOptions, empty interface {
	runtime.Object
	metav1.Object
}) watch.Interface {
	events := make(chan watch.Event, 1)
	if opts.SendInitialEvents != nil && *opts.SendInitialEvents {
		empty.SetResourceVersion("1")
		empty.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
		events <- watch.Event{Type: watch.Bookmark, Object: empty}
	}
	w := watch.NewProxyWatcher(events)
	go func() {
		select {
		case <-ctx.Done():
			w.Stop()
		case <-w.StopChan():
		}
		close(events)
	}()
	return w
}
