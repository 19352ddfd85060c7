package provider

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/vk-cri/vk-cri/provider/objectcache"
	"github.com/vk-cri/vk-cri/provider/translate"
)

// ObjectSource gives the provider the API objects containers refer to: ConfigMaps and Secrets
// by name, and the services whose variables containers get.
type ObjectSource interface {
	translate.ObjectReader
	// RegisterPod declares the ConfigMaps and Secrets the pod refers to, so that reads of them
	// are served from a watch; UnregisterPod releases them once the pod has terminated.
	RegisterPod(pod *v1.Pod)
	UnregisterPod(uid types.UID)
	// Services lists every service; an error until the list has been read once.
	Services() ([]*v1.Service, error)
}

// apiObjects reads ConfigMaps and Secrets through the node's watch-based object cache and keeps
// services in an informer, as the kubelet does.
type apiObjects struct {
	*objectcache.Cache
	services corelisters.ServiceLister
	synced   cache.InformerSynced
}

// NewAPIObjects starts the services informer (it runs until ctx ends); ConfigMaps and Secrets
// are read through objects, the cache the volume manager shares.
func NewAPIObjects(ctx context.Context, client kubernetes.Interface, objects *objectcache.Cache) ObjectSource {
	factory := informers.NewSharedInformerFactory(client, 0)
	inf := factory.Core().V1().Services()
	o := &apiObjects{Cache: objects, services: inf.Lister(), synced: inf.Informer().HasSynced}
	factory.Start(ctx.Done())
	return o
}

func (o *apiObjects) Services() ([]*v1.Service, error) {
	if !o.synced() {
		return nil, fmt.Errorf("services have not yet been read at least once, cannot construct envvars")
	}
	return o.services.List(labels.Everything())
}
