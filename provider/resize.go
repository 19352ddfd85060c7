package provider

import (
	"encoding/json"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/nodedeclaredfeatures/features/inplacepodresize"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/vk-cri/vk-cri/provider/podspec"
)

// Events of in-place resizes, as the kubelet names them.
const (
	eventResizeStarted    = "ResizeStarted"
	eventResizeCompleted  = "ResizeCompleted"
	eventResizeDeferred   = "ResizeDeferred"
	eventResizeInfeasible = "ResizeInfeasible"
	eventResizeError      = "ResizeError"
)

// specAllocation is what admitting the pod as it is allocates: the resources of every
// container that can be resized in place (regular and init containers; ephemeral ones have
// none).
func specAllocation(pod *v1.Pod) map[string]v1.ResourceRequirements {
	out := make(map[string]v1.ResourceRequirements, len(pod.Spec.Containers)+len(pod.Spec.InitContainers))
	for i := range pod.Spec.InitContainers {
		out[pod.Spec.InitContainers[i].Name] = *pod.Spec.InitContainers[i].Resources.DeepCopy()
	}
	for i := range pod.Spec.Containers {
		out[pod.Spec.Containers[i].Name] = *pod.Spec.Containers[i].Resources.DeepCopy()
	}
	return out
}

// withAllocation is the pod as allocated: its spec with each container's allocated resources.
// vk-cri configures, resizes and reports containers from it, so that a resize it has not
// accepted (deferred) changes nothing. The pod is copied only when something differs.
func withAllocation(pod *v1.Pod, alloc map[string]v1.ResourceRequirements) *v1.Pod {
	if !allocationDiffers(pod, alloc) {
		return pod
	}
	out := pod.DeepCopy()
	for _, list := range [][]v1.Container{out.Spec.InitContainers, out.Spec.Containers} {
		for i := range list {
			if r, ok := alloc[list[i].Name]; ok {
				list[i].Resources = *r.DeepCopy()
			}
		}
	}
	return out
}

// allocationDiffers reports whether the spec asks for other resources than those allocated.
func allocationDiffers(pod *v1.Pod, alloc map[string]v1.ResourceRequirements) bool {
	for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			if r, ok := alloc[list[i].Name]; ok && !equality.Semantic.DeepEqual(list[i].Resources, r) {
				return true
			}
		}
	}
	return false
}

// resizeVerdict is the outcome of admitting a resize: it fits, or it waits with the reason the
// PodResizePending condition shows.
type resizeVerdict struct {
	Fit    bool
	Reason string // v1.PodReasonDeferred or v1.PodReasonInfeasible
	// Refusal is the admission's own reason (OutOfcpu ...), which the kubelet's event names.
	Refusal string
	Message string
}

// admitResize decides whether the node can give the pod its new requests next to the others it
// has admitted (each at its allocated resources), as the kubelet's admission of a resize does
// with the scheduler's resource fit: a resize that does not fit now is Deferred, to be tried
// again when resources are freed. (The API server itself refuses a resize over the node's
// allocatable; the kubelet's Infeasible reasons - swap, static CPU or memory managers,
// disabled features - do not arise on vk-cri.)
func admitResize(pod *v1.Pod, others []*v1.Pod, allocatable v1.ResourceList) resizeVerdict {
	want := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	used := v1.ResourceList{}
	for _, o := range others {
		for name, q := range resourcehelper.PodRequests(o, resourcehelper.PodResourcesOptions{}) {
			sum := used[name]
			sum.Add(q)
			used[name] = sum
		}
	}
	// The scheduler's order of checks, and its units: millicores for cpu, bytes otherwise.
	for _, name := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage} {
		w, ok := want[name]
		if !ok || w.IsZero() {
			continue
		}
		u, c := used[name], allocatable[name]
		value := func(q *resource.Quantity) int64 { return q.Value() }
		if name == v1.ResourceCPU {
			value = func(q *resource.Quantity) int64 { return q.MilliValue() }
		}
		if value(&w) > value(&c)-value(&u) {
			return resizeVerdict{Reason: v1.PodReasonDeferred, Refusal: "OutOf" + string(name), Message: fmt.Sprintf(
				"Node didn't have enough resource: %s, requested: %d, used: %d, capacity: %d", name, value(&w), value(&u), value(&c))}
		}
	}
	return resizeVerdict{Fit: true}
}

// resizeConditions are the pod's PodResizePending and PodResizeInProgress conditions, kept by
// the worker between syncs as the kubelet's status manager keeps them.
type resizeConditions struct {
	Pending    *v1.PodCondition
	InProgress *v1.PodCondition
}

// resizeCondition is a resize condition as the kubelet writes it: True, probed now, its
// transition time kept while the reason stays.
func resizeCondition(t v1.PodConditionType, old *v1.PodCondition, reason, message string, gen int64, now time.Time) *v1.PodCondition {
	c := &v1.PodCondition{
		Type:               t,
		Status:             v1.ConditionTrue,
		LastProbeTime:      metav1.NewTime(now),
		LastTransitionTime: metav1.NewTime(now),
		ObservedGeneration: gen,
		Reason:             reason,
		Message:            message,
	}
	if old != nil && old.Reason == reason {
		c.LastTransitionTime = old.LastTransitionTime
		if old.Message == message && old.ObservedGeneration == gen {
			// Unchanged: no new status write for a resize evaluated again.
			c.LastProbeTime = old.LastProbeTime
		}
	}
	return c
}

// setPending records why the resize waits; it reports whether the reason or the generation
// changed (then the kubelet records an event).
func (r *resizeConditions) setPending(reason, message string, gen int64, now time.Time) bool {
	old := r.Pending
	r.Pending = resizeCondition(v1.PodResizePending, old, reason, message, gen, now)
	return old == nil || old.Reason != reason || old.ObservedGeneration != gen
}

// setInProgress marks a resize under way. An existing condition keeps its generation, reason
// and message unless new ones are given (an error), as the kubelet's status manager does; it
// returns the condition's generation and whether anything changed.
func (r *resizeConditions) setInProgress(reason, message string, gen int64, now time.Time) (int64, bool) {
	old := r.InProgress
	if old != nil {
		if reason == "" && message == "" {
			reason, message = old.Reason, old.Message
		}
		gen = old.ObservedGeneration
	}
	r.InProgress = resizeCondition(v1.PodResizeInProgress, old, reason, message, gen, now)
	changed := old == nil || old.Reason != reason || old.Message != message
	return gen, changed
}

// clearInProgress ends a resize; it returns the generation it was for, if there was one.
func (r *resizeConditions) clearInProgress() (int64, bool) {
	if r.InProgress == nil {
		return 0, false
	}
	gen := r.InProgress.ObservedGeneration
	r.InProgress = nil
	return gen, true
}

// list is the conditions in the kubelet's order.
func (r resizeConditions) list() []v1.PodCondition {
	var out []v1.PodCondition
	if r.Pending != nil {
		out = append(out, *r.Pending.DeepCopy())
	}
	if r.InProgress != nil {
		out = append(out, *r.InProgress.DeepCopy())
	}
	return out
}

// backfillResizeConditions takes the resize conditions of a status reported before (by an
// earlier vk-cri process), as the kubelet takes them from the API at start-up.
func backfillResizeConditions(conds []v1.PodCondition) resizeConditions {
	var r resizeConditions
	for i := range conds {
		c := conds[i].DeepCopy()
		switch c.Type {
		case v1.PodResizePending:
			r.Pending = c
		case v1.PodResizeInProgress:
			r.InProgress = c
		}
	}
	return r
}

// resizeSummary is the JSON of the kubelet's resize event messages.
type resizeSummary struct {
	InitContainers []resizeSummaryContainer `json:"initContainers,omitempty"`
	Containers     []resizeSummaryContainer `json:"containers,omitempty"`
	Generation     int64                    `json:"generation"`
	Error          string                   `json:"error,omitempty"`
}

type resizeSummaryContainer struct {
	Name      string                  `json:"name"`
	Resources v1.ResourceRequirements `json:"resources,omitempty"`
}

// resizeEventMessage is "<prefix>: {containers' resources, generation[, error]}" for the pod.
func resizeEventMessage(prefix string, pod *v1.Pod, gen int64, errMsg string) string {
	s := resizeSummary{Generation: gen, Error: errMsg}
	for _, c := range pod.Spec.InitContainers {
		s.InitContainers = append(s.InitContainers, resizeSummaryContainer{Name: c.Name, Resources: c.Resources})
	}
	for _, c := range pod.Spec.Containers {
		s.Containers = append(s.Containers, resizeSummaryContainer{Name: c.Name, Resources: c.Resources})
	}
	data, err := json.Marshal(s)
	if err != nil {
		return prefix
	}
	return prefix + ": " + string(data)
}

// resizeTarget is a running container whose resources change in place.
type resizeTarget struct {
	ID      string
	Name    string
	Init    bool
	Index   int
	Desired v1.ResourceRequirements
	Current v1.ResourceRequirements
}

// resizeChange compares a running container's allocated resources with those applied to it.
// It reports whether they differ, and whether the container's resize policy for a resource
// that differs asks for a restart (the default, NotRequired, resizes in place).
func resizeChange(c *v1.Container, applied v1.ResourceRequirements) (differs, restart bool) {
	type field struct {
		name          v1.ResourceName
		desired, have int64
	}
	fields := []field{
		{v1.ResourceCPU, c.Resources.Limits.Cpu().MilliValue(), applied.Limits.Cpu().MilliValue()},
		{v1.ResourceCPU, c.Resources.Requests.Cpu().MilliValue(), applied.Requests.Cpu().MilliValue()},
		{v1.ResourceMemory, c.Resources.Limits.Memory().Value(), applied.Limits.Memory().Value()},
		{v1.ResourceMemory, c.Resources.Requests.Memory().Value(), applied.Requests.Memory().Value()},
	}
	for _, f := range fields {
		if f.desired == f.have {
			continue
		}
		differs = true
		if resizePolicy(c, f.name) == v1.RestartContainer {
			restart = true
		}
	}
	return differs, restart
}

// resizePolicy is the container's restart policy for resizing one resource.
func resizePolicy(c *v1.Container, name v1.ResourceName) v1.ResourceResizeRestartPolicy {
	for _, p := range c.ResizePolicy {
		if p.ResourceName == name {
			return p.RestartPolicy
		}
	}
	return v1.NotRequired
}

// resizeKillMessage is the Killing event's message of a container restarted by its resize policy.
func resizeKillMessage(name string) string {
	return "Container " + name + " resize requires restart"
}

// resizeInProgress reports whether a running resizable container still runs with other
// resources than allocated: the kubelet's PodResizeInProgress stays until none does. Like the
// kubelet's, the check leaves out init containers that are not sidecars (their resize is
// applied all the same).
func resizeInProgress(pod *v1.Pod, rt *podRuntime) bool {
	for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			c := &list[i]
			if podspec.IsInitContainer(pod, c.Name) && !podspec.IsSidecar(c) {
				continue
			}
			cur := rt.latest(c.Name)
			if cur == nil || !cur.running() {
				continue
			}
			if differs, _ := resizeChange(c, rt.Actuated[c.Name]); differs {
				return true
			}
		}
	}
	return false
}

// DeclaredFeatures are the node features of in-place resize vk-cri supports, as the kubelet
// declares them in the node's status: resizing init containers that are not sidecars (regular
// containers and sidecars need no declaration). Pod-level resources are not resized in place:
// vk-cri allocates and resizes per container (the pod cgroup follows its containers' resize).
func DeclaredFeatures() []string {
	return []string{inplacepodresize.IPPRInitContainersFeatureGate}
}
