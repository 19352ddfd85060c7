package provider

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vk-cri/vk-cri/provider/prober"
	"github.com/vk-cri/vk-cri/provider/translate"
)

// probeManager is what the pod workers need of the prober (provider/prober.Manager): workers
// started per pod, verdicts per container instance, and the status fields they decide.
type probeManager interface {
	probeResults
	probeStatus
	AddPod(pod *v1.Pod)
	StopLivenessAndStartup(uid types.UID)
	RemovePod(uid types.UID)
	TriggerUnready(pod *v1.Pod, s *v1.PodStatus)
}

// lastStatus is the probe workers' view of a pod: its last computed status, copied.
func (p *Provider) lastStatus(uid types.UID) (*v1.PodStatus, bool) {
	rec, ok := p.pods.get(uid)
	if !ok {
		return nil, false
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.status == nil {
		return nil, false
	}
	return rec.status.DeepCopy(), true
}

// probeVerdictChanged has the pod looked at again: its status (readiness, started) or its
// actions (a liveness or startup failure) change. As with the kubelet, a readiness or startup
// verdict shows in the status at once, and the sync it asks for waits for its turn in the
// pod's sync cadence (cadence.go).
func (p *Provider) probeVerdictChanged(uid types.UID, k prober.Kind) {
	rec, ok := p.pods.get(uid)
	if !ok {
		return
	}
	if k == prober.Readiness || k == prober.Startup {
		rec.mu.Lock()
		rec.probeWake = true
		if rec.cadence.probeSyncSince.IsZero() {
			rec.cadence.probeSyncSince = time.Now()
		}
		if k == prober.Startup {
			rec.cadence.probeSyncProbes = true
		}
		rec.mu.Unlock()
	}
	rec.poke()
}

// probeCommand expands $(VAR) references in an exec probe's command from the container's env
// as the spec writes it (a variable set from a source counts as empty), as the kubelet does.
func probeCommand(c *v1.Container, cmd []string) []string {
	env := make(map[string]string, len(c.Env))
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	return translate.ExpandAll(cmd, translate.EnvLookup(env))
}

// probeEvent records a probe's event on its container.
func (p *Provider) probeEvent(pod *v1.Pod, container string, isInit bool, eventType, reason, message string) {
	p.containerEvent(pod, container, isInit, eventType, reason, "%s", message)
}
