package provider

import (
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-cri/vk-cri/provider/podspec"
	"github.com/vk-cri/vk-cri/provider/status"
)

// reasonSandboxNotReady is the reason of a false PodReadyToStartContainers, as the kubelet
// writes it.
const reasonSandboxNotReady = "PodSandboxNotReady"

// statusInput is everything status generation reads. It is a pure function of it.
type statusInput struct {
	Pod         *v1.Pod
	Runtime     *podRuntime
	RuntimeName string // prefix of container IDs, e.g. "containerd"
	HostIPs     []string
	// Reasons holds, per container name, why it is not running: the last start error or back-off.
	Reasons map[string]waitingReason
	// Terminal is true while the pod is torn down or after it finished: nothing will start again.
	Terminal bool
	// Deleting is true once the API deleted the pod: no container will be started again, so
	// none shows why it waits (the kubelet's restart check answers no for a pod with a deletion
	// timestamp), while the phase is still judged as for a pod that runs.
	Deleting bool
	// Failure, when set, ends the pod Failed with its reason and message (an exceeded deadline).
	Failure *podFailure
	Now     time.Time
	// Probes, when set, decides the containers' started and ready fields (else: running).
	Probes probeStatus
	// PodCgroups describes the pod cgroups the kubelet would read a running pod's resources from.
	PodCgroups podCgroupModel
	// Actuated are the resources vk-cri applied to each container's running instance.
	Actuated map[string]v1.ResourceRequirements
	// ResizeConditions are the pod's PodResizePending and PodResizeInProgress conditions.
	ResizeConditions []v1.PodCondition
	// SupportsRRO is whether the pod's runtime handler makes recursive read-only mounts.
	SupportsRRO bool
}

// probeStatus sets the started and ready fields of a pod's new status from its probes; the
// pod's own status is the one reported before.
type probeStatus interface {
	UpdatePodStatus(pod *v1.Pod, s *v1.PodStatus)
}

func toContainerState(cs *containerState, id string) v1.ContainerState {
	switch cs.State {
	case runtimeapi.ContainerState_CONTAINER_RUNNING:
		return v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(cs.StartedAt)}}
	case runtimeapi.ContainerState_CONTAINER_EXITED:
		return v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
			ExitCode:    cs.ExitCode,
			Reason:      cs.Reason,
			Message:     cs.Message,
			StartedAt:   metav1.NewTime(cs.StartedAt),
			FinishedAt:  metav1.NewTime(cs.FinishedAt),
			ContainerID: id,
		}}
	default:
		return v1.ContainerState{Waiting: &v1.ContainerStateWaiting{}}
	}
}

// containerStatuses converts the runtime's instances of each container into API statuses: the
// newest instance gives the state, the one before it the last termination state.
func containerStatuses(in statusInput, containers []v1.Container, isInit bool) []v1.ContainerStatus {
	defaultReason := reasonContainerCreating
	if len(in.Pod.Spec.InitContainers) > 0 {
		defaultReason = reasonPodInitializing
	}
	out := make([]v1.ContainerStatus, 0, len(containers))
	for i := range containers {
		c := &containers[i]
		st := v1.ContainerStatus{
			Name:         c.Name,
			Image:        c.Image,
			State:        v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: defaultReason}},
			Started:      new(bool),
			VolumeMounts: volumeMountStatuses(c, in.SupportsRRO),
		}
		prevStatus, hasPrev := previousContainerStatus(in.Pod, c.Name)
		insts := in.Runtime.instances(c.Name)
		if len(insts) == 0 && hasPrev && prevStatus.State.Terminated != nil {
			// The kubelet keeps the status of a terminated container the runtime no longer has
			// (kubelet_pods.go convertToAPIContainerStatuses: the old terminated status is the
			// default), as for an evicted pod whose containers its container deletor removed.
			st = *prevStatus.DeepCopy()
			st.VolumeMounts = volumeMountStatuses(c, in.SupportsRRO)
			if st.Started == nil {
				st.Started = new(bool)
			}
		}
		if len(insts) > 0 {
			cur := insts[0]
			st.ContainerID = in.RuntimeName + "://" + cur.ID
			var prev *v1.ContainerStatus
			if hasPrev {
				prev = &prevStatus
			}
			// What it runs with: the runtime's report, completed by what vk-cri applied (the
			// pod is the allocated pod: a resize that waits is not in it).
			applied, ok := in.Actuated[c.Name]
			if !ok {
				applied = c.Resources
			}
			st.Resources = containerStatusResources(c, cur, st.ContainerID, prev, applied)
			st.AllocatedResources = allocatedContainerResources(c)
			st.ImageID = cur.ImageRef
			st.User = status.ContainerUser(cur.User)
			st.RestartCount = int32(cur.RestartCount)
			st.State = toContainerState(cur, st.ContainerID)
			running := cur.State == runtimeapi.ContainerState_CONTAINER_RUNNING
			*st.Started = running
			if isInit {
				st.Ready = cur.State == runtimeapi.ContainerState_CONTAINER_EXITED && cur.ExitCode == 0
				if podspec.IsSidecar(c) {
					st.Ready = running
				}
			} else {
				st.Ready = running
			}
			if len(insts) > 1 {
				prev := insts[1]
				st.LastTerminationState = toContainerState(prev, in.RuntimeName+"://"+prev.ID)
			} else if hasPrev {
				// From the container's own previous status, ephemeral containers' too.
				st.LastTerminationState = keptLastState(prevStatus, st.ContainerID)
			}
		}
		if r, ok := in.Reasons[c.Name]; ok && st.State.Running == nil && !in.Terminal && !in.Deleting && mayRunAgain(in.Pod, c, insts) {
			if st.State.Terminated != nil {
				st.LastTerminationState = st.State
			}
			st.State = v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: r.Reason, Message: r.Message}}
		}
		out = append(out, st)
	}
	if !isInit {
		// The kubelet lists regular containers by name.
		sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	}
	return out
}

// previousContainerStatus is the previous status of the pod's container (init, regular or
// ephemeral: names are unique across the three).
func previousContainerStatus(pod *v1.Pod, name string) (v1.ContainerStatus, bool) {
	for _, list := range [][]v1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses, pod.Status.EphemeralContainerStatuses} {
		if s, ok := status.FindStatus(list, name); ok {
			return s, true
		}
	}
	return v1.ContainerStatus{}, false
}

// keptLastState is the last termination state of a container whose previous instance the
// runtime no longer holds (removed once dead, as the kubelet removes them): the previous status
// says what it was, as the kubelet carries it over.
func keptLastState(old v1.ContainerStatus, currentID string) v1.ContainerState {
	if old.ContainerID != currentID && old.State.Terminated != nil {
		return v1.ContainerState{Terminated: old.State.Terminated.DeepCopy()}
	}
	if old.LastTerminationState.Terminated != nil {
		return v1.ContainerState{Terminated: old.LastTerminationState.Terminated.DeepCopy()}
	}
	return v1.ContainerState{}
}

// mayRunAgain reports whether a container that is not running will be started (again): only
// then does its status show why it waits, as with the kubelet.
func mayRunAgain(pod *v1.Pod, c *v1.Container, insts []*containerState) bool {
	if len(insts) == 0 || insts[0].State != runtimeapi.ContainerState_CONTAINER_EXITED {
		return true
	}
	cur := insts[0]
	if !podspec.IsSidecar(c) && cur.ExitCode == 0 && podspec.IsInitContainer(pod, c.Name) {
		return false // an init container that succeeded is done
	}
	return podspec.ShouldRestart(c, pod, cur.ExitCode)
}

// generatePodStatus computes the pod's status as the kubelet would report it.
func generatePodStatus(in statusInput) v1.PodStatus {
	pod := in.Pod
	old := pod.Status
	s := v1.PodStatus{
		QOSClass:           old.QOSClass,
		StartTime:          old.StartTime,
		ObservedGeneration: pod.Generation,
	}
	if s.StartTime == nil {
		t := metav1.NewTime(in.Now)
		s.StartTime = &t
	}
	for _, ip := range in.HostIPs {
		s.HostIPs = append(s.HostIPs, v1.HostIP{IP: ip})
	}
	if len(in.HostIPs) > 0 {
		s.HostIP = in.HostIPs[0]
	}
	s.PodIPs = podIPs(in, old)
	if len(s.PodIPs) > 0 {
		s.PodIP = s.PodIPs[0].IP
	}

	if len(pod.Spec.InitContainers) > 0 {
		s.InitContainerStatuses = containerStatuses(in, pod.Spec.InitContainers, true)
	}
	s.ContainerStatuses = containerStatuses(in, pod.Spec.Containers, false)
	if len(pod.Spec.EphemeralContainers) > 0 {
		s.EphemeralContainerStatuses = ephemeralStatuses(in)
	}
	if in.Probes != nil {
		in.Probes.UpdatePodStatus(pod, &s)
	}
	// The pod cgroup holds what was applied to the containers (a resize in progress shows the
	// old values there), the aggregates what is allocated.
	s.Resources, s.AllocatedResources = podStatusResources(pod, withAllocation(pod, in.Actuated), old, in.PodCgroups, podCgroupExists(in))

	initialized := status.InitializedCondition(pod, s.InitContainerStatuses, s.ContainerStatuses, v1.PodPending)
	s.Phase = status.PodPhase(pod, s.InitContainerStatuses, s.ContainerStatuses, in.Terminal, initialized.Status == v1.ConditionTrue)
	// A pod that ran and was never going to run again keeps its last phase when re-reported.
	if old.Phase == v1.PodSucceeded || old.Phase == v1.PodFailed {
		s.Phase = old.Phase
	}
	if s.Phase == old.Phase {
		// The reason and message belong to the phase.
		s.Reason, s.Message = old.Reason, old.Message
	}
	if in.Failure != nil {
		s.Phase, s.Reason, s.Message = v1.PodFailed, in.Failure.Reason, in.Failure.Message
	}
	initialized = status.InitializedCondition(pod, s.InitContainerStatuses, s.ContainerStatuses, s.Phase)
	containersReady := status.ContainersReadyCondition(pod, s.InitContainerStatuses, s.ContainerStatuses, s.Phase)
	ready := status.ReadyCondition(pod, old.Conditions, containersReady)

	// Conditions the kubelet does not own (readiness gates, DisruptionTarget ...) are kept as
	// others wrote them, first, as the kubelet's status manager orders them.
	var conds []v1.PodCondition
	for _, c := range old.Conditions {
		if !status.KubeletOwnedCondition(c.Type) {
			conds = append(conds, c)
		}
	}
	// The resize conditions carry the generation and times of their own events.
	conds = append(conds, in.ResizeConditions...)
	owned := len(conds)
	conds = append(conds,
		sandboxReadyCondition(in),
		initialized,
		ready,
		containersReady,
		v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionTrue},
	)
	for i := owned; i < len(conds); i++ {
		conds[i].ObservedGeneration = pod.Generation
		conds[i].LastTransitionTime = status.TransitionTime(old.Conditions, conds[i], in.Now)
	}
	s.Conditions = conds
	limitTerminationMessages(pod, &s)
	return s
}

// podCgroupExists reports whether the kubelet would still have the pod's cgroup: until nothing
// of the pod runs any more once it is torn down.
func podCgroupExists(in statusInput) bool {
	if !in.Terminal {
		return true
	}
	if sb := in.Runtime.newestSandbox(); sb != nil && sb.Ready {
		return true
	}
	if in.Runtime == nil {
		return false
	}
	for _, c := range in.Runtime.Containers {
		if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			return true
		}
	}
	return false
}

func podIPs(in statusInput, old v1.PodStatus) []v1.PodIP {
	var ips []v1.PodIP
	if in.Pod.Spec.HostNetwork {
		for _, ip := range in.HostIPs {
			ips = append(ips, v1.PodIP{IP: ip})
		}
		return ips
	}
	if sb := in.Runtime.newestSandbox(); sb != nil {
		for _, ip := range sb.IPs {
			ips = append(ips, v1.PodIP{IP: ip})
		}
	}
	if len(ips) == 0 {
		// A stopped sandbox no longer reports its address; the pod keeps the one it had.
		return old.PodIPs
	}
	return ips
}

func sandboxReadyCondition(in statusInput) v1.PodCondition {
	sb := in.Runtime.newestSandbox()
	switch {
	case sb == nil:
		return v1.PodCondition{Type: v1.PodReadyToStartContainers, Status: v1.ConditionFalse, Reason: reasonSandboxNotReady, Message: "no pod sandbox exists"}
	case !sb.Ready:
		return v1.PodCondition{Type: v1.PodReadyToStartContainers, Status: v1.ConditionFalse, Reason: reasonSandboxNotReady, Message: "pod sandbox is not ready"}
	case !in.Pod.Spec.HostNetwork && len(sb.IPs) == 0:
		return v1.PodCondition{Type: v1.PodReadyToStartContainers, Status: v1.ConditionFalse, Reason: reasonSandboxNotReady, Message: "pod sandbox has no IP address"}
	}
	return v1.PodCondition{Type: v1.PodReadyToStartContainers, Status: v1.ConditionTrue}
}
