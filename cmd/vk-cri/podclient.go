package main

import (
	"context"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// removalOwner is the provider's side of a pod's removal from the API.
type removalOwner interface {
	TakeOverRemoval(pod *v1.Pod) bool
}

// providerOwnedPods is the pod client of virtual-kubelet's pod controller. The controller
// force-deletes a deleted pod as soon as none of its containers runs, or when the grace period
// it observed ends, before the provider has stopped the containers and reported their final
// state. Like the kubelet, vk-cri removes the pods it runs itself once they are terminated: such
// force deletions (grace 0 with a UID precondition) are handed to the provider instead.
type providerOwnedPods struct {
	corev1client.PodsGetter
	owner removalOwner
}

func (c providerOwnedPods) Pods(namespace string) corev1client.PodInterface {
	return providerOwnedPodInterface{PodInterface: c.PodsGetter.Pods(namespace), owner: c.owner}
}

type providerOwnedPodInterface struct {
	corev1client.PodInterface
	owner removalOwner
}

func (c providerOwnedPodInterface) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	if opts.Preconditions != nil && opts.Preconditions.UID != nil {
		if pod, err := c.PodInterface.Get(ctx, name, metav1.GetOptions{}); err == nil &&
			pod.UID == *opts.Preconditions.UID && c.owner.TakeOverRemoval(pod) {
			return nil
		}
	}
	return c.PodInterface.Delete(ctx, name, opts)
}
