package compare

// The `for:` of a wait step: WaitFor and ParseWaitFor.

import (
	"fmt"
	"strconv"
	"strings"
)

// WaitKind is what a wait step waits for.
type WaitKind string

// The wait kinds, as written in `for:` (before any ":").
const (
	WaitRunning            WaitKind = "Running"
	WaitReady              WaitKind = "Ready"
	WaitSucceeded          WaitKind = "Succeeded"
	WaitFailed             WaitKind = "Failed"
	WaitDeleted            WaitKind = "Deleted"
	WaitScheduled          WaitKind = "Scheduled"
	WaitContainerRunning   WaitKind = "ContainerRunning"
	WaitContainerTerm      WaitKind = "ContainerTerminated"
	WaitRestarts           WaitKind = "Restarts"
	WaitWaitingReason      WaitKind = "WaitingReason"
	WaitTerminatedReason   WaitKind = "TerminatedReason"
	WaitConditionKindValue WaitKind = "Condition"
)

// WaitFor is a parsed `for:` of a wait step.
type WaitFor struct {
	Raw       string
	Kind      WaitKind
	Container string // ContainerRunning, ContainerTerminated, Restarts, WaitingReason, TerminatedReason
	Reason    string // WaitingReason, TerminatedReason
	Count     int32  // Restarts
	Condition string // Condition: the condition type
	Status    string // Condition: True, False or Unknown
}

var waitForSyntax = "Running | Ready | Succeeded | Failed | Deleted | Scheduled | ContainerRunning:<c> | " +
	"ContainerTerminated:<c> | Restarts:<c>>=<N> | WaitingReason:<c>=<Reason> | TerminatedReason:<c>=<Reason> | " +
	"Condition:<Type>=<Status>"

// ParseWaitFor parses the `for:` of a wait step.
func ParseWaitFor(s string) (WaitFor, error) {
	w := WaitFor{Raw: s}
	kind, arg, hasArg := strings.Cut(s, ":")
	w.Kind = WaitKind(kind)
	switch w.Kind {
	case WaitRunning, WaitReady, WaitSucceeded, WaitFailed, WaitDeleted, WaitScheduled:
		if hasArg {
			return w, fmt.Errorf("%q takes no argument", kind)
		}
		return w, nil
	case WaitContainerRunning, WaitContainerTerm:
		if arg == "" {
			return w, fmt.Errorf("%s needs a container name (%s:<container>)", kind, kind)
		}
		w.Container = arg
		return w, nil
	case WaitRestarts:
		c, n, ok := strings.Cut(arg, ">=")
		if !ok || c == "" {
			return w, fmt.Errorf("Restarts is written Restarts:<container>>=<N>, got %q", s)
		}
		v, err := strconv.ParseInt(n, 10, 32)
		if err != nil || v < 0 {
			return w, fmt.Errorf("Restarts: %q is not a non-negative integer", n)
		}
		w.Container, w.Count = c, int32(v)
		return w, nil
	case WaitWaitingReason, WaitTerminatedReason:
		c, r, ok := strings.Cut(arg, "=")
		if !ok || c == "" || r == "" {
			return w, fmt.Errorf("%s is written %s:<container>=<Reason>, got %q", kind, kind, s)
		}
		w.Container, w.Reason = c, r
		return w, nil
	case WaitConditionKindValue:
		t, st, ok := strings.Cut(arg, "=")
		if !ok || t == "" {
			return w, fmt.Errorf("Condition is written Condition:<Type>=<Status>, got %q", s)
		}
		if st != "True" && st != "False" && st != "Unknown" {
			return w, fmt.Errorf("Condition status must be True, False or Unknown, got %q", st)
		}
		w.Condition, w.Status = t, st
		return w, nil
	}
	return w, fmt.Errorf("unknown wait %q; one of %s", s, waitForSyntax)
}
