package prober

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
)

// attempts is how often an action that errored (could not run at all) is tried before the
// probe counts as errored.
const attempts = 3

// Event reasons the kubelet's prober records.
const (
	EventUnhealthy    = "Unhealthy"
	EventProbeWarning = "ProbeWarning"
)

// target is what a probe acts on: a container instance of a pod.
type target struct {
	pod         *v1.Pod
	container   *v1.Container
	isInit      bool
	containerID string
	podIP       string
}

// runAction runs the probe's handler once.
func (m *Manager) runAction(ctx context.Context, p *v1.Probe, t target) (Outcome, string, error) {
	timeout := time.Duration(p.TimeoutSeconds) * time.Second
	if timeout <= 0 {
		timeout = time.Second
	}
	switch {
	case p.Exec != nil:
		cmd := p.Exec.Command
		if m.execCommand != nil {
			cmd = m.execCommand(t.container, cmd)
		}
		return Exec(ctx, m.execer, t.containerID, cmd, timeout)
	case p.HTTPGet != nil:
		req, err := NewHTTPGetRequest(p.HTTPGet, t.container, t.podIP, "probe")
		if err != nil {
			return OutcomeUnknown, "", err
		}
		return m.http.Do(req.WithContext(ctx), timeout)
	case p.TCPSocket != nil:
		port, err := ResolvePort(p.TCPSocket.Port, t.container)
		if err != nil {
			return OutcomeUnknown, "", err
		}
		host := p.TCPSocket.Host
		if host == "" {
			host = t.podIP
		}
		o, out := TCPSocket(host, port, timeout)
		return o, out, nil
	case p.GRPC != nil:
		service := ""
		if p.GRPC.Service != nil {
			service = *p.GRPC.Service
		}
		o, out := GRPC(t.podIP, service, int(p.GRPC.Port), timeout)
		return o, out, nil
	}
	return OutcomeUnknown, "", fmt.Errorf("missing probe handler for %s_%s(%s):%s", t.pod.Name, t.pod.Namespace, t.pod.UID, t.container.Name)
}

// probe runs the probe (retrying an action that errored), records the kubelet's events and
// returns the verdict of this one run. An error means no verdict: the run does not count.
func (m *Manager) probe(ctx context.Context, kind Kind, p *v1.Probe, t target) (Result, error) {
	var (
		o   Outcome
		out string
		err error
	)
	for i := 0; i < attempts; i++ {
		if o, out, err = m.runAction(ctx, p, t); err == nil {
			break
		}
	}
	if err != nil {
		m.event(t, v1.EventTypeWarning, EventUnhealthy, fmt.Sprintf("%s probe errored and resulted in %s state: %s", kind, o, err))
		return Failure, err
	}
	switch o {
	case OutcomeSuccess:
		return Success, nil
	case OutcomeWarning:
		m.event(t, v1.EventTypeWarning, EventProbeWarning, fmt.Sprintf("%s probe warning: %s", kind, out))
		return Success, nil
	case OutcomeFailure:
		m.event(t, v1.EventTypeWarning, EventUnhealthy, fmt.Sprintf("%s probe failed: %s", kind, out))
	}
	return Failure, nil
}

func (m *Manager) event(t target, eventType, reason, message string) {
	if m.events != nil {
		m.events(t.pod, t.container.Name, t.isInit, eventType, reason, message)
	}
}
