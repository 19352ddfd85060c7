package status

import (
	"context"
	"fmt"

	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	"github.com/virtual-kubelet/virtual-kubelet/node"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
)

// RemovalOwner is the provider's side of a pod's removal from the API.
type RemovalOwner interface {
	TakeOverRemoval(pod *v1.Pod) bool
}

// providerOwnedPods is the pod client of virtual-kubelet's pod controller. The controller
// force-deletes a deleted pod as soon as none of its containers runs, or when the grace period
// it observed ends, before the provider has stopped the containers and reported their final
// state. Like the kubelet, vk-cri removes the pods it runs itself once they are terminated: such
// force deletions (grace 0 with a UID precondition) are handed to the provider instead.
//
// Its status updates keep the conditions vk-cri does not own as the API holds them, as the
// kubelet's status manager merges them: the controller writes the provider's whole status with
// the resourceVersion of its cached pod, and the provider may not have seen a readiness gate's
// condition written meanwhile. current, when set, gives that cached pod.
type providerOwnedPods struct {
	corev1client.PodsGetter
	owner   RemovalOwner
	current func(namespace, name string) (*v1.Pod, error)
}

func (c providerOwnedPods) Pods(namespace string) corev1client.PodInterface {
	return providerOwnedPodInterface{PodInterface: c.PodsGetter.Pods(namespace), owner: c.owner, current: c.current}
}

type providerOwnedPodInterface struct {
	corev1client.PodInterface
	owner   RemovalOwner
	current func(namespace, name string) (*v1.Pod, error)
}

// UpdateStatus writes the pod's status with the API's conditions that vk-cri does not own. They
// come from the cached pod of the same resourceVersion, so that a condition written after it
// makes the update conflict (and be retried) instead of being overwritten.
func (c providerOwnedPodInterface) UpdateStatus(ctx context.Context, pod *v1.Pod, opts metav1.UpdateOptions) (*v1.Pod, error) {
	if c.current != nil {
		if cur, err := c.current(pod.Namespace, pod.Name); err == nil && cur.UID == pod.UID && cur.ResourceVersion == pod.ResourceVersion {
			pod = pod.DeepCopy()
			pod.Status.Conditions = MergeConditions(cur.Status.Conditions, pod.Status.Conditions)
		}
	}
	return c.PodInterface.UpdateStatus(ctx, pod, opts)
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

// APIStatusObserver is the provider's side of status changes others make in the API.
type APIStatusObserver interface {
	RemovalOwner
	ObserveAPIStatus(pod *v1.Pod)
}

// FollowAPIStatus wires the pod controller to the provider: its pod client is providerOwnedPods
// on the controller's pod cache, and each change of a pod's status in the API (a readiness
// gate's condition) reaches the provider, as the kubelet's pod config reconciles such updates.
func FollowAPIStatus(c *node.PodControllerConfig, p APIStatusObserver) error {
	pods := providerOwnedPods{PodsGetter: c.PodClient, owner: p}
	if c.PodInformer != nil {
		lister := c.PodInformer.Lister()
		pods.current = func(namespace, name string) (*v1.Pod, error) { return lister.Pods(namespace).Get(name) }
		_, err := c.PodInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			UpdateFunc: func(_, obj any) {
				if pod, ok := obj.(*v1.Pod); ok {
					p.ObserveAPIStatus(pod)
				}
			},
		})
		if err != nil {
			return fmt.Errorf("watching pod status changes: %w", err)
		}
	}
	c.PodClient = pods
	if h, ok := c.Provider.(asyncPodHandler); ok && pods.current != nil {
		c.Provider = controllerPodView{asyncPodHandler: h, current: pods.current}
	}
	return nil
}

// asyncPodHandler is a provider that tells the pod controller of status changes itself.
type asyncPodHandler interface {
	node.PodLifecycleHandler
	node.PodNotifier
}

// controllerPodView is the provider as the pod controller sees it. The controller looks a pod up
// by name, and when it finds one whose spec looks equal it neither creates nor updates anything.
// A pod recreated under the name of a pod vk-cri is still terminating (a grace-0 deletion leaves
// the API at once) would so never reach the provider. The kubelet tells pods apart by UID: here
// the provider's pod is hidden from the controller while the API holds another pod of that name.
type controllerPodView struct {
	asyncPodHandler
	current func(namespace, name string) (*v1.Pod, error)
}

func (v controllerPodView) GetPod(ctx context.Context, namespace, name string) (*v1.Pod, error) {
	pod, err := v.asyncPodHandler.GetPod(ctx, namespace, name)
	if err != nil || pod == nil {
		return pod, err
	}
	if api, err := v.current(namespace, name); err == nil && api.UID != pod.UID {
		return nil, errdefs.NotFoundf("pod %s/%s with UID %s is not on this node yet (UID %s is terminating)", namespace, name, api.UID, pod.UID)
	}
	return pod, nil
}
