package provider

import (
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	resourcehelper "k8s.io/component-helpers/resource"
)

// insufficientResource is one resource the node cannot give a pod, in the kubelet's units
// (millicores for cpu, a count for pods, bytes or units otherwise). Used is what the node's
// other admitted, active pods request: their summed requests, not what they consume.
type insufficientResource struct {
	Name                      v1.ResourceName
	Requested, Used, Capacity int64
}

// rejection is the kubelet's admission failure for it: reason OutOf<resource> (OutOfcpu,
// OutOfmemory, OutOfephemeral-storage, OutOfpods, OutOfexample.com/gpu ...) and its message
// (pkg/kubelet/lifecycle/predicate.go, InsufficientResourceError).
func (r insufficientResource) rejection() admissionRejection {
	return admissionRejection{
		Reason: "OutOf" + string(r.Name),
		Message: fmt.Sprintf("Node didn't have enough resource: %s, requested: %d, used: %d, capacity: %d",
			r.Name, r.Requested, r.Used, r.Capacity),
	}
}

// admittedPodRequests is what an admitted pod holds of the node: its requests as the
// scheduler's node info sums them (k8s.io/kubernetes pkg/scheduler/framework PodInfo.
// CalculateResource): init containers and restartable sidecars folded in by the resource helper,
// pod-level resources and overhead counted, and the larger of spec and status resources while a
// resize is under way (InPlacePodVerticalScaling is GA, InPlacePodLevelResourcesVerticalScaling
// beta and on in v1.37).
func admittedPodRequests(pod *v1.Pod) v1.ResourceList {
	return resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{
		UseStatusResources: true,
		InPlacePodLevelResourcesVerticalScalingEnabled: true,
	})
}

// newPodRequests is what a pod to admit asks of the node (the scheduler's noderesources
// computePodResourceRequest): its spec only, pod-level resources counted.
func newPodRequests(pod *v1.Pod) v1.ResourceList {
	return resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
}

// withoutMissingExtendedResources drops the containers' requests of extended resources the node
// does not advertise, as the kubelet's predicate admission does before checking the fit
// (removeMissingExtendedResources): such resources may be cluster-level ones the node knows
// nothing of, so a pod asking for them is not refused for it.
func withoutMissingExtendedResources(pod *v1.Pod, allocatable v1.ResourceList) *v1.Pod {
	out := pod.DeepCopy()
	filter := func(cs []v1.Container) {
		for i := range cs {
			kept := v1.ResourceList{}
			for name, q := range cs[i].Resources.Requests {
				if _, advertised := allocatable[name]; isExtendedResourceName(name) && !advertised {
					continue
				}
				kept[name] = q
			}
			cs[i].Resources.Requests = kept
		}
	}
	filter(out.Spec.Containers)
	filter(out.Spec.InitContainers)
	return out
}

// isExtendedResourceName tells an extended resource (example.com/gpu) as the API's helper does
// (k8s.io/kubernetes pkg/apis/core/v1/helper IsExtendedResourceName, not importable): a name
// with a domain outside kubernetes.io, not a quota name (requests.*), that is a valid quota
// name once prefixed with requests.
func isExtendedResourceName(name v1.ResourceName) bool {
	s := string(name)
	if isNativeResource(name) || strings.HasPrefix(s, v1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(v1.DefaultResourceRequestsPrefix+s)) == 0
}

// isNativeResource tells a resource of Kubernetes itself: without a domain, or in kubernetes.io.
func isNativeResource(name v1.ResourceName) bool {
	s := string(name)
	return !strings.Contains(s, "/") || strings.Contains(s, v1.ResourceDefaultNamespacePrefix)
}

// isScalarResourceName tells the resources the scheduler sums besides cpu, memory,
// ephemeral-storage and pods (k8s.io/kubernetes pkg/scheduler/util IsScalarResourceName):
// extended resources, hugepages, kubernetes.io/-prefixed ones and attachable volumes.
func isScalarResourceName(name v1.ResourceName) bool {
	s := string(name)
	return isExtendedResourceName(name) || strings.HasPrefix(s, v1.ResourceHugePagesPrefix) ||
		strings.Contains(s, v1.ResourceDefaultNamespacePrefix) || strings.HasPrefix(s, v1.ResourceAttachableVolumesPrefix)
}

// quantityValue is a quantity in the scheduler's unit for the resource: millicores for cpu,
// whole units (bytes, devices) for the others.
func quantityValue(name v1.ResourceName, q resource.Quantity) int64 {
	if name == v1.ResourceCPU {
		return q.MilliValue()
	}
	return q.Value()
}

// resourceFit is the scheduler's resource fit as the kubelet's admission applies it
// (k8s.io/kubernetes pkg/scheduler/framework/plugins/noderesources fitsRequest): the pod count
// first, then cpu, memory and ephemeral-storage, then the scalar resources, each checked only
// when the pod requests some of it. The scheduler visits scalar resources in map order; they are
// sorted here, so that a pod short of two of them always gets the same reason.
func resourceFit(pod *v1.Pod, allocatable v1.ResourceList, others []*v1.Pod) []insufficientResource {
	var out []insufficientResource
	allowedPods := allocatable.Pods().Value()
	if int64(len(others))+1 > allowedPods {
		out = append(out, insufficientResource{Name: v1.ResourcePods, Requested: 1, Used: int64(len(others)), Capacity: allowedPods})
	}
	want := newPodRequests(pod)
	used := map[v1.ResourceName]int64{}
	for _, o := range others {
		for name, q := range admittedPodRequests(o) {
			used[name] += quantityValue(name, q)
		}
	}
	check := func(name v1.ResourceName) {
		q, ok := want[name]
		if !ok {
			return
		}
		requested := quantityValue(name, q)
		if requested <= 0 {
			return
		}
		capacity := int64(0)
		if c, ok := allocatable[name]; ok {
			capacity = quantityValue(name, c)
		}
		if requested > capacity-used[name] {
			out = append(out, insufficientResource{Name: name, Requested: requested, Used: used[name], Capacity: capacity})
		}
	}
	for _, name := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage} {
		check(name)
	}
	var scalars []v1.ResourceName
	for name := range want {
		if isScalarResourceName(name) {
			scalars = append(scalars, name)
		}
	}
	slices.Sort(scalars)
	for _, name := range scalars {
		check(name)
	}
	return out
}
