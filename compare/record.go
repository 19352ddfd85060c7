package compare

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// SideRecord is what one node did in one scenario, normalised. Fields documented as "not
// compared" are kept for people reading the JSON result.
type SideRecord struct {
	// Node and Namespace are where the scenario ran (not compared).
	Node      string `json:"node"`
	Namespace string `json:"namespace"`
	// Error is set when the run could not be carried out (API errors while setting up, not
	// behaviour of the node). A scenario with an error on either side is not a match.
	Error string `json:"error,omitempty"`
	// Objects holds the outcome of creating each of the scenario's objects: "ok" or an error.
	Objects []string `json:"objects,omitempty"`
	// Steps holds the outcome of each step, in order.
	Steps []StepRecord `json:"steps"`
	// Pods is keyed by the pod's name in the scenario.
	Pods map[string]*PodRecord `json:"pods"`
}

// StepRecord is the outcome of one step.
type StepRecord struct {
	Step string `json:"step"`
	// Result is "ok", "wait timed out: <for>", "wait impossible: <for> (...)",
	// "skipped: scenario timeout" or "error: <normalised text>".
	Result string      `json:"result"`
	Exec   *ExecRecord `json:"exec,omitempty"`
	// Seconds is how long the step took (not compared).
	Seconds float64 `json:"seconds"`
}

// ExecRecord is the outcome of an exec step.
type ExecRecord struct {
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	ExitCode int    `json:"exitCode"`
	// Error is the normalised error text when the exec itself failed (not a non-zero exit).
	Error string `json:"error,omitempty"`
}

// PodRecord is what happened to one pod.
type PodRecord struct {
	// CreateError is the normalised error of the create call, if it failed.
	CreateError string `json:"createError,omitempty"`
	// Timeline is every distinct consecutive normalised status seen by the watch, in order.
	Timeline []TimelineEntry `json:"timeline"`
	// Events are the pod's events, one entry per (type, reason, fieldPath), sorted.
	Events []EventRecord `json:"events"`
	// Logs per container name.
	Logs map[string]*ContainerLogs `json:"logs,omitempty"`
	// Deletion is set when a step deleted the pod.
	Deletion *DeletionRecord `json:"deletion,omitempty"`
	// Final is the shape of the pod's last status seen (its status when it was deleted).
	Final *StatusShape `json:"final,omitempty"`
}

// TimelineEntry is one snapshot of the timeline with the time it was seen.
type TimelineEntry struct {
	// At is the number of seconds since the side's pods were created (not compared).
	At float64 `json:"at"`
	// Seconds is how long the state was visible in the API as the watch saw it: from the event
	// that showed it to the event that replaced it or removed the pod (durations.go). Records
	// made before durations were recorded have none, and their durations are not compared.
	Seconds *float64 `json:"seconds,omitempty"`
	// Open marks the last state of a pod still in the API when the timelines stopped: it was
	// visible for at least Seconds.
	Open bool `json:"open,omitempty"`
	PodSnapshot
}

// PodSnapshot is a pod status with every volatile field left out; see NormalizePod.
type PodSnapshot struct {
	Phase      string              `json:"phase"`
	Reason     string              `json:"reason,omitempty"`
	HasMessage bool                `json:"hasMessage,omitempty"`
	Conditions []ConditionSnapshot `json:"conditions,omitempty"`
	Containers []ContainerSnapshot `json:"containers,omitempty"`
}

// ConditionSnapshot is a pod condition without times and message.
type ConditionSnapshot struct {
	Type   string `json:"type"`
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
}

// ContainerSnapshot is a container status without IDs, images and times.
type ContainerSnapshot struct {
	Name string `json:"name"`
	// Kind is "init", "regular" or "ephemeral".
	Kind string `json:"kind"`
	// State is "waiting:<Reason>", "running", "terminated:<Reason> exit=<N>" or "none".
	State        string `json:"state"`
	Ready        bool   `json:"ready"`
	Started      *bool  `json:"started,omitempty"`
	RestartCount int32  `json:"restartCount"`
	// LastState is "terminated:<Reason> exit=<N>" or empty.
	LastState string `json:"lastState,omitempty"`
}

// EventRecord is one kind of event of a pod.
type EventRecord struct {
	Type      string `json:"type"`
	Reason    string `json:"reason"`
	FieldPath string `json:"fieldPath,omitempty"`
	// Count is the number of occurrences (compared only with compare.eventCounts).
	Count int32 `json:"count"`
	// Message is the normalised message of the latest occurrence (not compared).
	Message string `json:"message,omitempty"`
}

// Key is what events are compared on.
func (e EventRecord) Key() string {
	if e.FieldPath == "" {
		return e.Type + " " + e.Reason
	}
	return e.Type + " " + e.Reason + " " + e.FieldPath
}

// ContainerLogs are a container's logs as the pods/log API returns them.
type ContainerLogs struct {
	Current  *LogResult `json:"current,omitempty"`
	Previous *LogResult `json:"previous,omitempty"`
}

// LogResult is one log read: the normalised text, or the normalised error.
type LogResult struct {
	Text  string `json:"text"`
	Error string `json:"error,omitempty"`
}

// DeletionRecord measures a delete step: from the delete call to the pod gone from the API.
type DeletionRecord struct {
	// GracePeriodSeconds is the grace period in effect: the step's, else the pod's, else 30.
	GracePeriodSeconds int64 `json:"gracePeriodSeconds"`
	// Gone is false when the pod was still there when the scenario ended.
	Gone bool `json:"gone"`
	// Seconds is the measured time, compared with the other node's within DeletionEnvelope
	// (deletion.go).
	Seconds float64 `json:"seconds"`
	// Bucket is DeletionBucket(Seconds, GracePeriodSeconds), or "not gone": a rough class for
	// people reading the JSON (not compared: fixed edges split the same behaviour).
	Bucket string `json:"bucket"`
}

// DeletionBucket puts a deletion time in a rough class for readers: "grace±2s" when it is
// within 2 s of the grace period (and the grace period is at least 3 s, so that the fixed
// buckets stay meaningful for short grace periods), otherwise "<1s", "1-3s", "3-10s", "10-30s"
// or ">30s". The comparison does not use it (deletion.go).
func DeletionBucket(seconds float64, grace int64) string {
	if grace >= 3 && seconds >= float64(grace)-2 && seconds <= float64(grace)+2 {
		return "grace±2s"
	}
	switch {
	case seconds < 1:
		return "<1s"
	case seconds < 3:
		return "1-3s"
	case seconds < 10:
		return "3-10s"
	case seconds < 30:
		return "10-30s"
	}
	return ">30s"
}

// ---------------------------------------------------------------------------------------------
// Rendering and flattening snapshots, for diffs.

// String renders a snapshot on one line.
func (s PodSnapshot) String() string {
	var b strings.Builder
	b.WriteString(s.Phase)
	if s.Reason != "" {
		b.WriteString(" reason=" + s.Reason)
	}
	if s.HasMessage {
		b.WriteString(" +message")
	}
	if len(s.Conditions) > 0 {
		var cs []string
		for _, c := range s.Conditions {
			cs = append(cs, c.Type+"="+condValue(c))
		}
		b.WriteString(" [" + strings.Join(cs, " ") + "]")
	}
	for _, c := range s.Containers {
		b.WriteString(" " + c.Name + "{" + c.summary() + "}")
	}
	return b.String()
}

// summary renders a container's status on one line.
func (c ContainerSnapshot) summary() string {
	var b strings.Builder
	if c.Kind != "regular" {
		b.WriteString(c.Kind + " ")
	}
	b.WriteString(c.State)
	if c.Ready {
		b.WriteString(" ready")
	}
	if c.Started != nil && *c.Started {
		b.WriteString(" started")
	}
	if c.RestartCount > 0 {
		b.WriteString(" restarts=" + strconv.Itoa(int(c.RestartCount)))
	}
	if c.LastState != "" {
		b.WriteString(" last=" + c.LastState)
	}
	return b.String()
}

func condValue(c ConditionSnapshot) string {
	if c.Reason != "" {
		return c.Status + "(" + c.Reason + ")"
	}
	return c.Status
}

// field is one leaf of a flattened record: a path and its rendered value.
type field struct {
	path  string
	value string
}

// flatten lists a snapshot's leaves with paths relative to the snapshot, in a stable order.
func (s PodSnapshot) flatten() []field {
	f := []field{{"phase", s.Phase}}
	if s.Reason != "" {
		f = append(f, field{"reason", s.Reason})
	}
	if s.HasMessage {
		f = append(f, field{"message", "present"})
	}
	for _, c := range s.Conditions {
		f = append(f, field{"conditions[" + c.Type + "]", condValue(c)})
	}
	for _, c := range s.Containers {
		p := "containers[" + c.Name + "]"
		f = append(f,
			field{p + ".kind", c.Kind},
			field{p + ".state", c.State},
			field{p + ".ready", strconv.FormatBool(c.Ready)},
		)
		if c.Started != nil {
			f = append(f, field{p + ".started", strconv.FormatBool(*c.Started)})
		}
		f = append(f, field{p + ".restartCount", strconv.Itoa(int(c.RestartCount))})
		if c.LastState != "" {
			f = append(f, field{p + ".lastState", c.LastState})
		}
	}
	return f
}

// key is a canonical form of the snapshot: equal snapshots have equal keys.
func (s PodSnapshot) key() string {
	var b strings.Builder
	for _, f := range s.flatten() {
		fmt.Fprintf(&b, "%s=%s\n", f.path, f.value)
	}
	return b.String()
}

// Equal reports whether two snapshots are the same.
func (s PodSnapshot) Equal(o PodSnapshot) bool { return s.key() == o.key() }

// sortedKeys returns a map's keys sorted.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
