// Package prober runs the startup, liveness and readiness probes of a node's containers the way
// the kubelet v1.37 does: one worker per probe, results kept per container instance, and the
// pod's status told which containers are started and ready.
//
// The handler functions (HTTPGet, TCPSocket, GRPC, Exec) are exported so that lifecycle hooks
// can run the same actions.
package prober

import "fmt"

// Outcome is what one run of a handler concluded.
type Outcome int

const (
	// OutcomeSuccess: the action answered as healthy.
	OutcomeSuccess Outcome = iota
	// OutcomeWarning: healthy, with something worth an event (an HTTP redirect not followed).
	OutcomeWarning
	// OutcomeFailure: the action ran and answered unhealthy.
	OutcomeFailure
	// OutcomeUnknown: the action could not be run; the error says why.
	OutcomeUnknown
)

// String is the word the kubelet uses in its "probe errored" events.
func (o Outcome) String() string {
	switch o {
	case OutcomeSuccess:
		return "success"
	case OutcomeWarning:
		return "warning"
	case OutcomeFailure:
		return "failure"
	case OutcomeUnknown:
		return "unknown"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// Result is a probe's verdict on a container instance, after the thresholds.
type Result int

const (
	// Unknown: not decided yet (a startup probe before its first verdict).
	Unknown Result = iota
	Success
	Failure
)

func (r Result) String() string {
	switch r {
	case Success:
		return "Success"
	case Failure:
		return "Failure"
	}
	return "Unknown"
}

// Kind is one of the three probes a container may have.
type Kind int

const (
	Liveness Kind = iota
	Readiness
	Startup
)

// String is the capitalised name the kubelet's events start with ("Liveness probe failed: ...").
func (k Kind) String() string {
	switch k {
	case Liveness:
		return "Liveness"
	case Readiness:
		return "Readiness"
	case Startup:
		return "Startup"
	}
	return "UNKNOWN"
}

// initial is a probe's result when a new container instance is first seen: not ready until a
// readiness probe succeeds, alive until a liveness probe fails, not yet started.
func (k Kind) initial() Result {
	switch k {
	case Readiness:
		return Failure
	case Liveness:
		return Success
	}
	return Unknown
}
