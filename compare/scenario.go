package compare

// A scenario as the runner uses it: Scenario, its steps, Known and CompareOptions. Reading
// files is in scenario_load.go, their format and Parse in scenario_parse.go, the checks of
// steps against the pods in scenario_validate.go.

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// DefaultScenarioTimeout is the whole-scenario deadline when a scenario sets none.
const DefaultScenarioTimeout = 120 * time.Second

// DefaultWaitTimeout is the timeout of a wait step that sets none (capped by the scenario's
// deadline).
const DefaultWaitTimeout = 60 * time.Second

// DefaultExecTimeout is the timeout of an exec step that sets none.
const DefaultExecTimeout = 30 * time.Second

// Categories are the allowed values of a scenario's category.
var Categories = []string{"lifecycle", "failures", "env", "volumes", "probes", "security", "hooks", "termination", "hostile"}

// Scenario is one scenario file, validated and decoded.
type Scenario struct {
	// File is the path the scenario was loaded from.
	File        string
	Name        string
	Category    string
	Description string
	Known       *Known
	// Digest is the SHA-256 of the scenario's file: a baseline recorded from another version
	// of the file is not compared with.
	Digest  string
	Timeout time.Duration
	Compare CompareOptions
	Objects []runtime.Object
	Pods    []*v1.Pod
	Steps   []Step

	// added holds, per pod, the ephemeral containers earlier update steps add, so that later
	// steps may name them.
	added map[string][]string
}

// ID is "category/name", what --run matches against.
func (s *Scenario) ID() string { return s.Category + "/" + s.Name }

// Pod returns the scenario's pod manifest of that name.
func (s *Scenario) Pod(name string) *v1.Pod {
	for _, p := range s.Pods {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// Known marks a scenario on which vk-cri is known not to match the kubelet yet.
type Known struct {
	Issue int    `json:"issue"`
	Why   string `json:"why"`
}

// CompareOptions tune how a scenario's two records are compared.
type CompareOptions struct {
	// EventCounts compares how many times each (type, reason, fieldPath) event occurred instead
	// of only whether it occurred.
	EventCounts bool `json:"eventCounts,omitempty"`
	// Ignore lists diff paths to leave out of the comparison (an addition to the format). A
	// pattern is a diff path in which "*" stands for any run of characters, e.g.
	// "pods/main/timeline[*].containers[web].restartCount" or "pods/*/logs[*].current". A diff is
	// ignored when its path (A side or B side) matches a pattern or starts with it followed by "."
	// or "[" or "/".
	Ignore []string `json:"ignore,omitempty"`
}

// StepKind names the kind of a step.
type StepKind string

// The step kinds.
const (
	StepWait   StepKind = "wait"
	StepSleep  StepKind = "sleep"
	StepExec   StepKind = "exec"
	StepUpdate StepKind = "update"
	StepDelete StepKind = "delete"
)

// Step is one step of a scenario; exactly one of the pointers is set, as Kind says.
type Step struct {
	Kind   StepKind
	Wait   *WaitStep
	Sleep  time.Duration
	Exec   *ExecStep
	Update *UpdateStep
	Delete *DeleteStep
}

// String describes the step in one line, as records and reports show it.
func (s Step) String() string {
	switch s.Kind {
	case StepWait:
		return fmt.Sprintf("wait %s %s", s.Wait.Pod, s.Wait.For.Raw)
	case StepSleep:
		return "sleep " + s.Sleep.String()
	case StepExec:
		c := s.Exec.Container
		if c == "" {
			c = "(default)"
		}
		return fmt.Sprintf("exec %s/%s %s", s.Exec.Pod, c, strings.Join(s.Exec.Command, " "))
	case StepUpdate:
		if s.Update.Subresource != "" {
			return fmt.Sprintf("update %s/%s %s", s.Update.Pod, s.Update.Subresource, string(s.Update.Patch))
		}
		return fmt.Sprintf("update %s %s", s.Update.Pod, string(s.Update.Patch))
	case StepDelete:
		if s.Delete.GracePeriodSeconds != nil {
			return fmt.Sprintf("delete %s grace=%ds", s.Delete.Pod, *s.Delete.GracePeriodSeconds)
		}
		return "delete " + s.Delete.Pod
	}
	return string(s.Kind)
}

// WaitStep waits for a pod to reach a state.
type WaitStep struct {
	Pod     string
	For     WaitFor
	Timeout time.Duration // 0: DefaultWaitTimeout
}

// ExecStep runs a command in a container through the pods/exec subresource.
type ExecStep struct {
	Pod       string
	Container string // empty: the pod's first container
	Command   []string
	Timeout   time.Duration // 0: DefaultExecTimeout
}

// UpdateStep applies a strategic merge patch to a pod, or to one of its subresources: status
// (as a controller owning a readiness gate's condition does), ephemeralcontainers (as kubectl
// debug adds an ephemeral container) or resize (as kubectl patch --subresource resize changes
// a running pod's container resources in place).
type UpdateStep struct {
	Pod   string
	Patch json.RawMessage
	// Subresource is "", SubresourceStatus, SubresourceEphemeralContainers or
	// SubresourceResize.
	Subresource string
}

// The pod subresources an update step may patch.
const (
	SubresourceStatus              = "status"
	SubresourceEphemeralContainers = "ephemeralcontainers"
	SubresourceResize              = "resize"
)

// DeleteStep deletes a pod and measures the time until it is gone from the API.
type DeleteStep struct {
	Pod                string
	GracePeriodSeconds *int64
}
