package provider

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-cri/vk-cri/provider/status"
)

// Ephemeral containers (kubectl debug) are added to a running pod through its
// ephemeralcontainers subresource. virtual-kubelet's pod controller counts
// spec.ephemeralContainers among the fields whose change makes it call UpdatePod, so the new spec
// reaches the pod's worker like any other update. The kubelet runs them once each: no probes,
// ports, hooks or restarts, and they never keep a pod alive.

// ephemeralToStart lists the indexes of the pod's ephemeral containers of which the runtime has
// no instance at all. One that ran, whatever its end, or that was created and never started,
// stays as it is: an ephemeral container is never started twice. They do not wait for the pod's
// init containers.
func ephemeralToStart(pod *v1.Pod, rt *podRuntime) []int {
	var out []int
	for i := range pod.Spec.EphemeralContainers {
		if rt.latest(pod.Spec.EphemeralContainers[i].Name) == nil {
			out = append(out, i)
		}
	}
	return out
}

// ephemeralRunning reports whether one of the pod's ephemeral containers runs.
func ephemeralRunning(pod *v1.Pod, rt *podRuntime) bool {
	for i := range pod.Spec.EphemeralContainers {
		if cur := rt.latest(pod.Spec.EphemeralContainers[i].Name); cur != nil && cur.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			return true
		}
	}
	return false
}

// ephemeralAsContainer is the container an ephemeral container runs as: the same fields.
func ephemeralAsContainer(ec *v1.EphemeralContainer) *v1.Container {
	return (*v1.Container)(&ec.EphemeralContainerCommon)
}

// ephemeralSpec is the pod's ephemeral container of that name, or nil.
func ephemeralSpec(pod *v1.Pod, name string) *v1.EphemeralContainer {
	if pod == nil {
		return nil
	}
	for i := range pod.Spec.EphemeralContainers {
		if pod.Spec.EphemeralContainers[i].Name == name {
			return &pod.Spec.EphemeralContainers[i]
		}
	}
	return nil
}

// errTargetNotFound is the CreateContainerConfigError of an ephemeral container whose target
// container has no instance in the runtime.
type errTargetNotFound struct{ Target string }

func (e errTargetNotFound) Error() string {
	return fmt.Sprintf("unable to find target container %s", e.Target)
}

// ephemeralTargetID is the runtime ID of the container whose process namespace the named
// ephemeral container joins (its newest instance, whatever its state), or "" when the container
// is not ephemeral or names no target.
func ephemeralTargetID(pod *v1.Pod, name string, rt *podRuntime) (string, error) {
	ec := ephemeralSpec(pod, name)
	if ec == nil || ec.TargetContainerName == "" {
		return "", nil
	}
	target := rt.latest(ec.TargetContainerName)
	if target == nil {
		return "", errTargetNotFound{Target: ec.TargetContainerName}
	}
	return target.ID, nil
}

// reportedEphemeral keeps, of a finished pod's ephemeral container statuses, those its previous
// status reported: the kubelet no longer looks at a pod that finished, so an ephemeral container
// added since never runs and gets no status.
func reportedEphemeral(cur, prev []v1.ContainerStatus) []v1.ContainerStatus {
	var out []v1.ContainerStatus
	for _, st := range cur {
		if _, ok := status.FindStatus(prev, st.Name); ok {
			out = append(out, st)
		}
	}
	return out
}

// adoptEphemeralSpec takes the API's ephemeral containers into the spec of a pod that finished:
// virtual-kubelet passes on no update of a pod in a terminal phase, while the kubelet's pod
// manager still takes the new spec, so that logs and exec of such a container answer that it is
// not available (rather than unknown). It reports whether the spec changed.
func adoptEphemeralSpec(rec *podRecord, api *v1.Pod) bool {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.pod == nil || !rec.lifecycle.endedInPlace() || equality.Semantic.DeepEqual(rec.pod.Spec.EphemeralContainers, api.Spec.EphemeralContainers) {
		return false
	}
	pod := rec.pod.DeepCopy()
	pod.Spec.EphemeralContainers = append([]v1.EphemeralContainer(nil), api.DeepCopy().Spec.EphemeralContainers...)
	rec.pod = pod
	return true
}

// withEphemeralFailures is the previous start failures (prev) with those of the ephemeral
// containers this sync tried to start (attempted) replaced by what it found (cur). Unlike a
// regular container's, an ephemeral container's failure shows in the status of the sync that
// found it: one that failed after its creation is never tried again, and its status would show
// the instance's end (a StartError termination), which the API lets no later status undo.
func withEphemeralFailures(pod *v1.Pod, attempted []int, prev, cur map[string]waitingReason) map[string]waitingReason {
	out := make(map[string]waitingReason, len(prev))
	for name, r := range prev {
		out[name] = r
	}
	for _, i := range attempted {
		name := pod.Spec.EphemeralContainers[i].Name
		if r, ok := cur[name]; ok {
			out[name] = r
		} else {
			delete(out, name)
		}
	}
	return out
}

// keptEphemeralReasons is this sync's start failures (cur) plus, from the previous ones (prev),
// why each ephemeral container this sync did not try to start failed to start: the kubelet's
// reason cache forgets a failure only when the container starts, so one whose start failed after
// its creation shows RunContainerError over its StartError for as long as the pod runs.
func keptEphemeralReasons(pod *v1.Pod, attempted []int, prev, cur map[string]waitingReason) map[string]waitingReason {
	tried := map[string]bool{}
	for _, i := range attempted {
		tried[pod.Spec.EphemeralContainers[i].Name] = true
	}
	out := cur
	for i := range pod.Spec.EphemeralContainers {
		name := pod.Spec.EphemeralContainers[i].Name
		r, ok := prev[name]
		if _, set := out[name]; !ok || tried[name] || set {
			continue
		}
		if out == nil {
			out = map[string]waitingReason{}
		}
		out[name] = r
	}
	return out
}

// ephemeralStatuses are the statuses of the pod's ephemeral containers, sorted by name, built as
// regular containers' are, except that nothing probes them: they are never ready and their
// started field is not set.
func ephemeralStatuses(in statusInput) []v1.ContainerStatus {
	specs := make([]v1.Container, 0, len(in.Pod.Spec.EphemeralContainers))
	for i := range in.Pod.Spec.EphemeralContainers {
		specs = append(specs, *ephemeralAsContainer(&in.Pod.Spec.EphemeralContainers[i]))
	}
	// As regular containers, from their own previous statuses: the last state carried over from
	// there (the kubelet's, with RestartAllContainersOnContainerExits on by default since v1.36)
	// is how one that failed to start keeps its StartError as last state once it no longer
	// waits (the pod is being deleted).
	out := containerStatuses(in, specs, false)
	for i := range out {
		out[i].Ready = false
		out[i].Started = nil
		// The API refuses to take an ephemeral container out of the terminated state (and
		// would then refuse every later status of the pod): one that ended stays as it ended,
		// as the kubelet keeps a terminated status whose container is gone.
		if old, ok := status.FindStatus(in.Pod.Status.EphemeralContainerStatuses, out[i].Name); ok && old.State.Terminated != nil && out[i].State.Terminated == nil {
			out[i] = old
		}
	}
	return out
}
