package provider

import (
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/vk-cri/vk-cri/provider/prober"
)

// probeResults are the probes' verdicts on container instances, by runtime container ID.
type probeResults interface {
	Result(k prober.Kind, containerID string) (prober.Result, bool)
}

// probeFailure tells whether a running container instance failed its liveness or startup
// probe and must be killed: the kill's event message and grace period (the probe's own
// terminationGracePeriodSeconds when it has one), without the "will be restarted" the caller
// adds when it restarts the container.
func probeFailure(pod *v1.Pod, c *v1.Container, cur *containerState, probes probeResults, isInit bool) (killTarget, bool) {
	if probes == nil {
		return killTarget{}, false
	}
	what := "Container"
	if isInit {
		what = "Init container"
	}
	for _, k := range [...]struct {
		kind  prober.Kind
		probe *v1.Probe
	}{{prober.Liveness, c.LivenessProbe}, {prober.Startup, c.StartupProbe}} {
		if r, ok := probes.Result(k.kind, cur.ID); !ok || r != prober.Failure {
			continue
		}
		t := killTarget{
			ID:      cur.ID,
			Name:    c.Name,
			Reason:  fmt.Sprintf("failed %s probe", lower(k.kind)),
			Message: fmt.Sprintf("%s %s failed %s probe", what, c.Name, lower(k.kind)),
			Keep:    true,
		}
		if k.probe != nil && k.probe.TerminationGracePeriodSeconds != nil && pod.Spec.TerminationGracePeriodSeconds != nil {
			g := *k.probe.TerminationGracePeriodSeconds
			t.Grace = &g
		}
		return t, true
	}
	return killTarget{}, false
}

// restartsAfterProbeKill tells whether a regular container killed for a failed probe runs again:
// its own restart policy if it has one (its restart rules are for exit codes, and it has not
// exited), else the pod's unless that is Never.
func restartsAfterProbeKill(pod *v1.Pod, c *v1.Container) bool {
	if c.RestartPolicy != nil {
		return *c.RestartPolicy != v1.ContainerRestartPolicyNever
	}
	return pod.Spec.RestartPolicy != v1.RestartPolicyNever
}

// startupPending tells whether a running sidecar still waits for its startup probe to succeed:
// the next init container and the regular containers wait for it.
func startupPending(c *v1.Container, cur *containerState, probes probeResults) bool {
	if c.StartupProbe == nil || probes == nil {
		return false
	}
	r, ok := probes.Result(prober.Startup, cur.ID)
	return !ok || r != prober.Success
}

func lower(k prober.Kind) string {
	switch k {
	case prober.Liveness:
		return "liveness"
	case prober.Readiness:
		return "readiness"
	}
	return "startup"
}
