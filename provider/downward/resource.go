package downward

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// limitDefaults are the resources whose missing limit the downward API reports as the node's
// allocatable (hugepages are never overcommitted, so they always carry a limit).
var limitDefaults = []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage}

// ResourceValue resolves a resourceFieldRef. The container is fs.ContainerName when set (it must
// be one of the pod's containers or init containers), otherwise self (env variables name their
// own container implicitly). A limit the container does not set is the pod-level limit if the
// pod has one, else the node's allocatable. The value is divided by the divisor (default 1) and
// rounded up.
func ResourceValue(pod *v1.Pod, self *v1.Container, fs *v1.ResourceFieldSelector, allocatable v1.ResourceList) (string, error) {
	if fs == nil {
		return "", fmt.Errorf("resourceFieldRef is empty")
	}
	c := self
	if fs.ContainerName != "" {
		c = findContainer(pod, fs.ContainerName)
		if c == nil {
			return "", fmt.Errorf("container %s not found", fs.ContainerName)
		}
	}
	if c == nil {
		return "", fmt.Errorf("resourceFieldRef %s names no container", fs.Resource)
	}
	limits := EffectiveLimits(pod, c, allocatable)

	divisor := fs.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	kind, name, ok := strings.Cut(fs.Resource, ".")
	if !ok || (kind != "limits" && kind != "requests") {
		return "", fmt.Errorf("unsupported container resource : %v", fs.Resource)
	}
	rn := v1.ResourceName(name)
	switch {
	case rn == v1.ResourceCPU, rn == v1.ResourceMemory, rn == v1.ResourceEphemeralStorage,
		strings.HasPrefix(name, v1.ResourceHugePagesPrefix):
	default:
		return "", fmt.Errorf("unsupported container resource : %v", fs.Resource)
	}
	list := c.Resources.Requests
	if kind == "limits" {
		list = limits
	}
	q := list[rn]
	if rn == v1.ResourceCPU {
		return ceilDiv(float64(q.MilliValue()), float64(divisor.MilliValue())), nil
	}
	return ceilDiv(float64(q.Value()), float64(divisor.Value())), nil
}

// EffectiveLimits is the container's limits with cpu, memory and ephemeral-storage filled in
// where the container sets none (or zero): from the pod-level limits, else from allocatable.
func EffectiveLimits(pod *v1.Pod, c *v1.Container, allocatable v1.ResourceList) v1.ResourceList {
	out := c.Resources.Limits.DeepCopy()
	if out == nil {
		out = v1.ResourceList{}
	}
	for _, rn := range limitDefaults {
		if q, ok := out[rn]; ok && !q.IsZero() {
			continue
		}
		fallback, ok := allocatable[rn]
		if !ok {
			continue
		}
		if pod.Spec.Resources != nil {
			if q, set := pod.Spec.Resources.Limits[rn]; set && !q.IsZero() {
				fallback = q
			}
		}
		out[rn] = fallback.DeepCopy()
	}
	return out
}

func findContainer(pod *v1.Pod, name string) *v1.Container {
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return &pod.Spec.Containers[i]
		}
	}
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			return &pod.Spec.InitContainers[i]
		}
	}
	return nil
}

func ceilDiv(v, d float64) string {
	return strconv.FormatInt(int64(math.Ceil(v/d)), 10)
}
