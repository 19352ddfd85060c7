package provider

import (
	"maps"
	"strconv"
)

// statusReasons picks the waiting reasons of the status vk-cri reports right after a sync's
// actions. The kubelet generates a status only when a sync starts, from its reason cache as the
// previous sync left it; a sync that changed the runtime is followed at once by one its PLEG
// triggers, whose status already shows what the first one found: RunContainerError for a start
// that failed, no more CrashLoopBackOff for a container it restarted. vk-cri reports the state
// after its actions without that second sync, so the reasons are this sync's when the runtime
// changed, and the previous ones when it did not (a pull that failed again is no runtime event:
// its back-off shows from the next sync on).
func statusReasons(before, after *podRuntime, previous, current map[string]waitingReason) map[string]waitingReason {
	if lifecycleChanged(before, after) {
		return current
	}
	return previous
}

// lifecycleChanged reports whether the pod's instances differ in what the kubelet's PLEG
// compares between two relists: which containers and sandboxes exist, and in which state.
func lifecycleChanged(before, after *podRuntime) bool {
	return !maps.Equal(lifecycleStates(before), lifecycleStates(after))
}

func lifecycleStates(rt *podRuntime) map[string]string {
	out := map[string]string{}
	if rt == nil {
		return out
	}
	for _, s := range rt.Sandboxes {
		out["sandbox/"+s.ID] = strconv.FormatBool(s.Ready)
	}
	for _, c := range rt.Containers {
		out["container/"+c.ID] = c.State.String()
	}
	return out
}
