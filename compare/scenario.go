package compare

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	jsonserializer "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// DefaultScenarioTimeout is the whole-scenario deadline when a scenario sets none.
const DefaultScenarioTimeout = 120 * time.Second

// DefaultWaitTimeout is the timeout of a wait step that sets none (capped by the scenario's
// deadline).
const DefaultWaitTimeout = 60 * time.Second

// DefaultExecTimeout is the timeout of an exec step that sets none.
const DefaultExecTimeout = 30 * time.Second

// Categories are the allowed values of a scenario's category.
var Categories = []string{"lifecycle", "failures", "env", "volumes", "probes", "security", "hooks", "termination"}

// Scenario is one scenario file, validated and decoded.
type Scenario struct {
	// File is the path the scenario was loaded from.
	File        string
	Name        string
	Category    string
	Description string
	Known       *Known
	Timeout     time.Duration
	Compare     CompareOptions
	Objects     []runtime.Object
	Pods        []*v1.Pod
	Steps       []Step

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

// ---------------------------------------------------------------------------------------------
// Loading.

// FileError is everything wrong with one scenario file.
type FileError struct {
	File   string
	Errors []string // "field: problem"
}

func (e *FileError) Error() string {
	if len(e.Errors) == 1 {
		return e.File + ": " + e.Errors[0]
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d problems:", e.File, len(e.Errors))
	for _, m := range e.Errors {
		b.WriteString("\n  " + m)
	}
	return b.String()
}

// LoadDir loads every *.yaml and *.yml file under dir, recursively (directories and files whose
// name starts with "." or "_" are skipped), and checks that scenario names are unique. The
// scenarios come sorted by category, then name. All problems of all files are reported together.
func LoadDir(dir string) ([]*Scenario, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		base := d.Name()
		if path != dir && (strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_")) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() && (strings.HasSuffix(base, ".yaml") || strings.HasSuffix(base, ".yml")) {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("scenarios: %w", err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("scenarios: no *.yaml files under %s", dir)
	}
	sort.Strings(files)
	var (
		out    []*Scenario
		errs   []error
		byName = map[string]string{}
	)
	for _, f := range files {
		s, err := LoadFile(f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if prev, dup := byName[s.Name]; dup {
			errs = append(errs, &FileError{File: f, Errors: []string{fmt.Sprintf("name: %q is already the name of %s", s.Name, prev)}})
			continue
		}
		byName[s.Name] = f
		out = append(out, s)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Category != out[j].Category {
			return out[i].Category < out[j].Category
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// LoadFile reads and validates one scenario file.
func LoadFile(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// The file as written, before validation.
type fileScenario struct {
	Name        string            `json:"name"`
	Category    string            `json:"category"`
	Description string            `json:"description"`
	Known       *Known            `json:"known"`
	Timeout     json.RawMessage   `json:"timeout"`
	Compare     *CompareOptions   `json:"compare"`
	Objects     []json.RawMessage `json:"objects"`
	Pods        []json.RawMessage `json:"pods"`
	Steps       []json.RawMessage `json:"steps"`
}

type fileStep struct {
	Wait   *fileWait       `json:"wait"`
	Sleep  json.RawMessage `json:"sleep"`
	Exec   *fileExec       `json:"exec"`
	Update *fileUpdate     `json:"update"`
	Delete *fileDelete     `json:"delete"`
}

type fileWait struct {
	Pod     string          `json:"pod"`
	For     string          `json:"for"`
	Timeout json.RawMessage `json:"timeout"`
}

type fileExec struct {
	Pod       string          `json:"pod"`
	Container string          `json:"container"`
	Command   []string        `json:"command"`
	Timeout   json.RawMessage `json:"timeout"`
}

type fileUpdate struct {
	Pod         string          `json:"pod"`
	Patch       json.RawMessage `json:"patch"`
	Subresource string          `json:"subresource"`
}

type fileDelete struct {
	Pod                string `json:"pod"`
	GracePeriodSeconds *int64 `json:"gracePeriodSeconds"`
}

// present reports whether an optional raw field was written (and is not null).
func present(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}

// parseDuration reads a duration written as a string ("90s", "1m30s"); a bare number is
// seconds. It must be positive.
func parseDuration(raw json.RawMessage) (time.Duration, error) {
	var d time.Duration
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		var n float64
		if err2 := json.Unmarshal(raw, &n); err2 != nil {
			return 0, fmt.Errorf("want a duration such as \"30s\", got %s", string(raw))
		}
		d = time.Duration(n * float64(time.Second))
	} else {
		v, err := time.ParseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("want a duration such as \"30s\", got %q", s)
		}
		d = v
	}
	if d <= 0 {
		return 0, fmt.Errorf("must be positive, got %s", d)
	}
	return d, nil
}

var scenarioNameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// strictDecode decodes JSON into v, rejecting unknown fields.
func strictDecode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return cleanJSONError(err)
	}
	return nil
}

// jsonError is a decoding error about one field (Field empty: about the value itself).
type jsonError struct {
	Field string
	Msg   string
}

func (e *jsonError) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

// cleanJSONError makes encoding/json's messages about the scenario format readable.
func cleanJSONError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return &jsonError{Field: te.Field, Msg: fmt.Sprintf("want %s, got a %s", jsonKind(te.Type), te.Value)}
	}
	return &jsonError{Msg: strings.TrimPrefix(err.Error(), "json: ")}
}

// within places an error under a field path: "prefix.field: msg", or "prefix: msg".
func within(prefix string, err error) string {
	var je *jsonError
	if errors.As(err, &je) && je.Field != "" {
		if prefix == "" {
			return je.Field + ": " + je.Msg
		}
		return prefix + "." + je.Field + ": " + je.Msg
	}
	if prefix == "" {
		return err.Error()
	}
	return prefix + ": " + err.Error()
}

// fieldOf is the field an error is about, if it says.
func fieldOf(err error) string {
	var je *jsonError
	if errors.As(err, &je) {
		return je.Field
	}
	return ""
}

func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a mapping"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return t.String()
}

// podDecoder decodes Kubernetes manifests strictly, with error messages naming the field.
var podDecoder = jsonserializer.NewSerializerWithOptions(jsonserializer.DefaultMetaFactory, scheme.Scheme, scheme.Scheme,
	jsonserializer.SerializerOptions{Yaml: false, Strict: true})

// allowedObjectKinds are the kinds `objects` may hold.
var allowedObjectKinds = map[string]bool{"ConfigMap": true, "Secret": true, "Service": true, "PersistentVolumeClaim": true}

// Parse validates one scenario file's contents; path is used in errors and for the name check.
func Parse(path string, data []byte) (*Scenario, error) {
	fe := &FileError{File: path}
	// A field that could not be decoded is reported once, not again as missing or invalid.
	var undecodable []string
	add := func(format string, a ...any) {
		msg := fmt.Sprintf(format, a...)
		for _, u := range undecodable {
			if strings.HasPrefix(msg, u+":") || strings.HasPrefix(msg, u+".") || strings.HasPrefix(msg, u+"[") {
				return
			}
		}
		fe.Errors = append(fe.Errors, msg)
	}

	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		add("not valid YAML: %v", err)
		return nil, fe
	}
	var f fileScenario
	if bytes.Equal(bytes.TrimSpace(js), []byte("null")) {
		add("empty file")
		return nil, fe
	}
	if err := strictDecode(js, &f); err != nil {
		// encoding/json fills in what it can and reports the first problem: report it and
		// validate the rest.
		add("%s", within("", err))
		if f := fieldOf(err); f != "" {
			undecodable = append(undecodable, f)
		} else {
			return nil, fe
		}
	}
	s := &Scenario{File: path, Name: f.Name, Category: f.Category, Description: strings.TrimSpace(f.Description), Known: f.Known, Timeout: DefaultScenarioTimeout}

	base := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(path), ".yaml"), ".yml")
	switch {
	case f.Name == "":
		add("name: missing (must be %q, the file name without .yaml)", base)
	case f.Name != base:
		add("name: %q does not match the file name (want %q)", f.Name, base)
	case !scenarioNameRE.MatchString(f.Name):
		add("name: %q must be lower-case letters, digits and '-'", f.Name)
	case len(f.Name) > 80:
		add("name: %q is longer than 80 characters", f.Name)
	}
	if f.Category == "" {
		add("category: missing (one of %s)", strings.Join(Categories, ", "))
	} else if !contains(Categories, f.Category) {
		add("category: %q is not one of %s", f.Category, strings.Join(Categories, ", "))
	}
	if s.Description == "" {
		add("description: missing")
	}
	if f.Known != nil {
		if f.Known.Issue <= 0 {
			add("known.issue: missing (the number of the issue that will fix it)")
		}
		if strings.TrimSpace(f.Known.Why) == "" {
			add("known.why: missing")
		}
	}
	if present(f.Timeout) {
		if d, err := parseDuration(f.Timeout); err != nil {
			add("timeout: %v", err)
		} else {
			s.Timeout = d
		}
	}
	if f.Compare != nil {
		s.Compare = *f.Compare
		for i, p := range s.Compare.Ignore {
			if strings.TrimSpace(p) == "" {
				add("compare.ignore[%d]: empty pattern", i)
			}
		}
	}

	// Objects.
	objNames := map[string]bool{}
	for i, raw := range f.Objects {
		field := fmt.Sprintf("objects[%d]", i)
		obj, gvk, err := decodeManifest(raw)
		if err != nil {
			add("%s", within(field, err))
			continue
		}
		if !allowedObjectKinds[gvk.Kind] {
			add("%s: kind %s is not supported (ConfigMap, Secret, Service or PersistentVolumeClaim)", field, gvk.Kind)
			continue
		}
		m := obj.(interface {
			GetName() string
			GetNamespace() string
		})
		if m.GetName() == "" {
			add("%s.metadata.name: missing", field)
		} else if objNames[gvk.Kind+"/"+m.GetName()] {
			add("%s.metadata.name: %s %q appears twice", field, gvk.Kind, m.GetName())
		}
		objNames[gvk.Kind+"/"+m.GetName()] = true
		if m.GetNamespace() != "" {
			add("%s.metadata.namespace: must not be set (each run gets a fresh namespace)", field)
		}
		s.Objects = append(s.Objects, obj)
	}

	// Pods.
	if len(f.Pods) == 0 {
		add("pods: at least one pod is needed")
	}
	for i, raw := range f.Pods {
		field := fmt.Sprintf("pods[%d]", i)
		obj, gvk, err := decodeManifest(raw)
		if err != nil {
			add("%s", within(field, err))
			continue
		}
		pod, ok := obj.(*v1.Pod)
		if !ok {
			add("%s: kind %s, want Pod", field, gvk.Kind)
			continue
		}
		if pod.Name == "" {
			add("%s.metadata.name: missing (generateName is not supported: steps refer to pods by name)", field)
		} else if s.Pod(pod.Name) != nil {
			add("%s.metadata.name: pod %q appears twice", field, pod.Name)
		}
		if pod.Namespace != "" {
			add("%s.metadata.namespace: must not be set (each run gets a fresh namespace)", field)
		}
		if pod.Spec.NodeName != "" {
			add("%s.spec.nodeName: must not be set (compare pins the pod to each node)", field)
		}
		if len(pod.Spec.Containers) == 0 {
			add("%s.spec.containers: at least one container is needed", field)
		}
		s.Pods = append(s.Pods, pod)
	}

	// Steps.
	for i, raw := range f.Steps {
		field := fmt.Sprintf("steps[%d]", i)
		var fs fileStep
		if err := strictDecode(raw, &fs); err != nil {
			add("%s", within(field, err))
			continue
		}
		st, errs := s.validateStep(fs)
		for _, e := range errs {
			if strings.HasPrefix(e, "a step ") {
				add("%s: %s", field, e)
			} else {
				add("%s.%s", field, e)
			}
		}
		if len(errs) == 0 {
			s.Steps = append(s.Steps, st)
		}
	}

	if len(fe.Errors) > 0 {
		return nil, fe
	}
	return s, nil
}

// decodeManifest decodes one Kubernetes manifest strictly.
func decodeManifest(raw json.RawMessage) (runtime.Object, *schema.GroupVersionKind, error) {
	var meta struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := json.Unmarshal(raw, &meta); err != nil {
		return nil, nil, fmt.Errorf("not a manifest: %v", cleanJSONError(err).(*jsonError).Msg)
	}
	if meta.APIVersion == "" {
		return nil, nil, errors.New("apiVersion: missing")
	}
	if meta.Kind == "" {
		return nil, nil, errors.New("kind: missing")
	}
	obj, gvk, err := podDecoder.Decode(raw, nil, nil)
	if err != nil {
		if runtime.IsStrictDecodingError(err) {
			// Strict errors still give a usable object; the message names the fields.
			msg := strings.TrimPrefix(err.Error(), "strict decoding error: ")
			return nil, nil, errors.New(msg)
		}
		if runtime.IsNotRegisteredError(err) {
			return nil, nil, fmt.Errorf("kind %s of apiVersion %s is unknown", meta.Kind, meta.APIVersion)
		}
		return nil, nil, cleanJSONError(err)
	}
	return obj, gvk, nil
}

// podContainer reports whether the pod manifest has an init or regular container of that name.
// podContainer reports whether the pod has the named container, or an earlier step adds it as
// an ephemeral container.
func (s *Scenario) podContainer(p *v1.Pod, name string) bool {
	for _, n := range s.added[p.Name] {
		if n == name {
			return true
		}
	}
	for _, c := range p.Spec.InitContainers {
		if c.Name == name {
			return true
		}
	}
	for _, c := range p.Spec.Containers {
		if c.Name == name {
			return true
		}
	}
	return false
}

// addEphemeral records the ephemeral containers a patch of the ephemeralcontainers subresource
// adds to the pod.
func (s *Scenario) addEphemeral(pod string, patch json.RawMessage) []string {
	var spec struct {
		Spec struct {
			EphemeralContainers []v1.EphemeralContainer `json:"ephemeralContainers"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(patch, &spec); err != nil {
		return []string{"update.patch: " + err.Error()}
	}
	ecs := spec.Spec.EphemeralContainers
	if len(ecs) == 0 {
		return []string{"update.patch: an ephemeralcontainers update adds spec.ephemeralContainers"}
	}
	if s.added == nil {
		s.added = map[string][]string{}
	}
	for _, ec := range ecs {
		if ec.Name == "" {
			return []string{"update.patch: an ephemeral container without a name"}
		}
		s.added[pod] = append(s.added[pod], ec.Name)
	}
	return nil
}

func (s *Scenario) checkPod(name string) (*v1.Pod, string) {
	if name == "" {
		return nil, "pod: missing"
	}
	p := s.Pod(name)
	if p == nil {
		return nil, fmt.Sprintf("pod: %q is not one of the scenario's pods (%s)", name, strings.Join(s.podNames(), ", "))
	}
	return p, ""
}

func (s *Scenario) podNames() []string {
	var n []string
	for _, p := range s.Pods {
		n = append(n, p.Name)
	}
	return n
}

func (s *Scenario) validateStep(fs fileStep) (Step, []string) {
	var (
		st   Step
		errs []string
		n    int
	)
	if fs.Wait != nil {
		n++
		st.Kind = StepWait
	}
	if present(fs.Sleep) {
		n++
		st.Kind = StepSleep
	}
	if fs.Exec != nil {
		n++
		st.Kind = StepExec
	}
	if fs.Update != nil {
		n++
		st.Kind = StepUpdate
	}
	if fs.Delete != nil {
		n++
		st.Kind = StepDelete
	}
	if n != 1 {
		return st, []string{"a step has exactly one of wait, sleep, exec, update, delete"}
	}
	switch st.Kind {
	case StepWait:
		w := &WaitStep{Pod: fs.Wait.Pod}
		p, perr := s.checkPod(fs.Wait.Pod)
		if perr != "" {
			errs = append(errs, "wait."+perr)
		}
		if fs.Wait.For == "" {
			errs = append(errs, "wait.for: missing; one of "+waitForSyntax)
		} else if wf, err := ParseWaitFor(fs.Wait.For); err != nil {
			errs = append(errs, "wait.for: "+err.Error())
		} else {
			w.For = wf
			if wf.Container != "" && p != nil && !s.podContainer(p, wf.Container) {
				errs = append(errs, fmt.Sprintf("wait.for: pod %q has no container %q", p.Name, wf.Container))
			}
		}
		if present(fs.Wait.Timeout) {
			d, err := parseDuration(fs.Wait.Timeout)
			if err != nil {
				errs = append(errs, "wait.timeout: "+err.Error())
			}
			w.Timeout = d
		}
		st.Wait = w
	case StepSleep:
		d, err := parseDuration(fs.Sleep)
		if err != nil {
			errs = append(errs, "sleep: "+err.Error())
		}
		st.Sleep = d
	case StepExec:
		e := &ExecStep{Pod: fs.Exec.Pod, Container: fs.Exec.Container, Command: fs.Exec.Command}
		p, perr := s.checkPod(fs.Exec.Pod)
		if perr != "" {
			errs = append(errs, "exec."+perr)
		}
		if e.Container != "" && p != nil && !s.podContainer(p, e.Container) {
			errs = append(errs, fmt.Sprintf("exec.container: pod %q has no container %q", p.Name, e.Container))
		}
		if len(e.Command) == 0 {
			errs = append(errs, "exec.command: missing")
		}
		if present(fs.Exec.Timeout) {
			d, err := parseDuration(fs.Exec.Timeout)
			if err != nil {
				errs = append(errs, "exec.timeout: "+err.Error())
			}
			e.Timeout = d
		}
		st.Exec = e
	case StepUpdate:
		u := &UpdateStep{Pod: fs.Update.Pod, Patch: fs.Update.Patch, Subresource: fs.Update.Subresource}
		p, perr := s.checkPod(fs.Update.Pod)
		if perr != "" {
			errs = append(errs, "update."+perr)
		}
		var m map[string]any
		if len(u.Patch) == 0 || string(u.Patch) == "null" {
			errs = append(errs, "update.patch: missing")
		} else if err := json.Unmarshal(u.Patch, &m); err != nil {
			errs = append(errs, "update.patch: must be a mapping (a strategic merge patch)")
		} else {
			u.Patch, _ = json.Marshal(m) // compact, keys sorted
		}
		switch u.Subresource {
		case "", SubresourceStatus, SubresourceResize:
		case SubresourceEphemeralContainers:
			if p != nil && m != nil {
				errs = append(errs, s.addEphemeral(p.Name, u.Patch)...)
			}
		default:
			errs = append(errs, fmt.Sprintf("update.subresource: %q is not %q, %q or %q", u.Subresource, SubresourceStatus, SubresourceEphemeralContainers, SubresourceResize))
		}
		st.Update = u
	case StepDelete:
		d := &DeleteStep{Pod: fs.Delete.Pod, GracePeriodSeconds: fs.Delete.GracePeriodSeconds}
		if _, perr := s.checkPod(fs.Delete.Pod); perr != "" {
			errs = append(errs, "delete."+perr)
		}
		if d.GracePeriodSeconds != nil && *d.GracePeriodSeconds < 0 {
			errs = append(errs, "delete.gracePeriodSeconds: must not be negative")
		}
		st.Delete = d
	}
	return st, errs
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
