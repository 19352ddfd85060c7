// Package runtimeclass follows the cluster's RuntimeClasses and resolves a pod's
// runtimeClassName to the CRI runtime handler its sandbox is run with, as the kubelet's
// RuntimeClass manager does (pkg/kubelet/runtimeclass/runtimeclass_manager.go).
package runtimeclass

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	nodev1 "k8s.io/client-go/listers/node/v1"
	"k8s.io/client-go/tools/cache"
)

// Manager caches every RuntimeClass through one shared informer (RuntimeClasses are few and
// cluster-wide; the kubelet watches them all, without resync).
type Manager struct {
	factory informers.SharedInformerFactory
	synced  cache.InformerSynced
	lister  nodev1.RuntimeClassLister
}

// New returns a manager; Start begins the watch.
func New(client kubernetes.Interface) *Manager {
	factory := informers.NewSharedInformerFactory(client, 0)
	inf := factory.Node().V1().RuntimeClasses()
	return &Manager{factory: factory, synced: inf.Informer().HasSynced, lister: inf.Lister()}
}

// Start runs the watch until ctx ends.
func (m *Manager) Start(ctx context.Context) {
	m.factory.Start(ctx.Done())
}

// WaitForSync waits, at most until ctx ends, for the watch's first list (a lookup before it
// would wrongly find no RuntimeClass), and reports whether it came.
func (m *Manager) WaitForSync(ctx context.Context) bool {
	return cache.WaitForCacheSync(ctx.Done(), m.synced)
}

// LookupRuntimeHandler returns the handler of the named RuntimeClass, "" (the runtime's default
// handler) for no name. A RuntimeClass that does not exist is the API's NotFound error
// (`runtimeclass.node.k8s.io "x" not found`), as the kubelet reports it.
func (m *Manager) LookupRuntimeHandler(runtimeClassName *string) (string, error) {
	if runtimeClassName == nil || *runtimeClassName == "" {
		return "", nil
	}
	rc, err := m.lister.Get(*runtimeClassName)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return "", err
		}
		return "", fmt.Errorf("failed to lookup RuntimeClass %s: %w", *runtimeClassName, err)
	}
	return rc.Handler, nil
}
