package objectcache

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// apiTimeout bounds each read from the API server.
const apiTimeout = 10 * time.Second

// Direct reads ConfigMaps and Secrets from the API server at each call.
type Direct struct {
	Client kubernetes.Interface
}

// ConfigMap reads the ConfigMap; a missing one is the kubelet's NotFound error.
func (d Direct) ConfigMap(ctx context.Context, namespace, name string) (*v1.ConfigMap, error) {
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	cm, err := d.Client.CoreV1().ConfigMaps(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, readError(KindConfigMap, namespace, name, err)
	}
	return cm, nil
}

// Secret reads the Secret; a missing one is the kubelet's NotFound error.
func (d Direct) Secret(ctx context.Context, namespace, name string) (*v1.Secret, error) {
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	s, err := d.Client.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, readError(KindSecret, namespace, name, err)
	}
	return s, nil
}

func readError(kind Kind, namespace, name string, err error) error {
	if apierrors.IsNotFound(err) {
		return notFound(kind, name)
	}
	return fmt.Errorf("reading %s %s/%s: %w", kind, namespace, name, err)
}

// notFound is the kubelet's error for a missing object: its object cache names the resource in
// the singular (`configmap "name" not found`).
func notFound(kind Kind, name string) error {
	return apierrors.NewNotFound(v1.Resource(string(kind)), name)
}
