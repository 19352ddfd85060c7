// Clean-up: a node's namespace at the end of its run, and what earlier (killed) runs left.

package main

import (
	"context"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/vk-cri/vk-cri/cri"
)

// cleanup deletes the node's pods (force after a while) and its namespace; bounded in time.
func (b *nodeBench) cleanup() {
	if b.ns == "" {
		return
	}
	defer func() {
		if b.cancel != nil {
			b.cancel()
		}
	}()
	deleteNamespace(b.kube, b.ns)
	b.ns = ""
}

func deleteNamespace(kube kubernetes.Interface, ns string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pods := kube.CoreV1().Pods(ns)
	grace := gracePeriod
	if err := pods.DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &grace}, metav1.ListOptions{}); err != nil && !apierrors.IsNotFound(err) {
		logf("cleanup: deleting pods of %s: %v", ns, err)
	}
	empty := func(ctx context.Context) (bool, error) {
		l, err := pods.List(ctx, metav1.ListOptions{})
		if err != nil {
			return apierrors.IsNotFound(err), nil
		}
		return len(l.Items) == 0, nil
	}
	if err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 45*time.Second, true, empty); err != nil {
		// The node's agent did not finish them (it may be gone): remove them from the API.
		zero := int64(0)
		logf("cleanup: pods of %s still there after 45 s, force-deleting them", ns)
		_ = pods.DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
	}
	if err := kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		logf("cleanup: deleting namespace %s: %v", ns, err)
		return
	}
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		logf("cleanup: namespace %s still terminating (the namespace controller finishes it)", ns)
		return
	}
	logf("cleanup: namespace %s removed", ns)
}

// cleanupLeftovers removes the namespaces and floor sandboxes of earlier runs.
func cleanupLeftovers(kube kubernetes.Interface, endpoint string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if kube != nil {
		l, err := kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: nsLabel})
		if err == nil {
			var wg sync.WaitGroup
			for _, ns := range l.Items {
				logf("cleanup: namespace %s left by run %s", ns.Name, ns.Labels[nsLabel])
				wg.Add(1)
				go func() { defer wg.Done(); deleteNamespace(kube, ns.Name) }()
			}
			wg.Wait()
		}
	}
	if endpoint != "" {
		rt, err := cri.Connect(ctx, endpoint, 30*time.Second)
		if err != nil {
			logf("cleanup: %v", err)
			return
		}
		removeFloorSandboxes(rt, "")
	}
}
