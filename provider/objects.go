package provider

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// apiCallTimeout bounds each read of a ConfigMap or Secret.
const apiCallTimeout = 30 * time.Second

// ObjectSource gives the provider the API objects containers refer to: ConfigMaps and Secrets
// by name, and the services whose variables containers get.
type ObjectSource interface {
	ConfigMap(ctx context.Context, namespace, name string) (*v1.ConfigMap, error)
	Secret(ctx context.Context, namespace, name string) (*v1.Secret, error)
	// Services lists every service; an error until the list has been read once.
	Services() ([]*v1.Service, error)
}

// apiObjects reads ConfigMaps and Secrets from the API server at each use (a container start
// then sees the object as it is now) and keeps services in an informer, as the kubelet does.
type apiObjects struct {
	client   kubernetes.Interface
	services corelisters.ServiceLister
	synced   cache.InformerSynced
}

// NewAPIObjects starts the services informer; it runs until ctx ends.
func NewAPIObjects(ctx context.Context, client kubernetes.Interface) ObjectSource {
	factory := informers.NewSharedInformerFactory(client, 0)
	inf := factory.Core().V1().Services()
	o := &apiObjects{client: client, services: inf.Lister(), synced: inf.Informer().HasSynced}
	factory.Start(ctx.Done())
	return o
}

func (o *apiObjects) ConfigMap(ctx context.Context, namespace, name string) (*v1.ConfigMap, error) {
	ctx, cancel := context.WithTimeout(ctx, apiCallTimeout)
	defer cancel()
	cm, err := o.client.CoreV1().ConfigMaps(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		// The kubelet's object cache names the resource in the singular.
		return nil, apierrors.NewNotFound(v1.Resource("configmap"), name)
	}
	return cm, err
}

func (o *apiObjects) Secret(ctx context.Context, namespace, name string) (*v1.Secret, error) {
	ctx, cancel := context.WithTimeout(ctx, apiCallTimeout)
	defer cancel()
	s, err := o.client.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, apierrors.NewNotFound(v1.Resource("secret"), name)
	}
	return s, err
}

func (o *apiObjects) Services() ([]*v1.Service, error) {
	if !o.synced() {
		return nil, fmt.Errorf("services have not yet been read at least once, cannot construct envvars")
	}
	return o.services.List(labels.Everything())
}
