package compare

// The scenario file format as written (fileScenario and its steps) and Parse, which decodes
// and validates one file, with decodeManifest for its pods and objects.

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	jsonserializer "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

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
	s := &Scenario{File: path, Name: f.Name, Category: f.Category, Description: strings.TrimSpace(f.Description), Known: f.Known, Timeout: DefaultScenarioTimeout,
		Digest: fmt.Sprintf("sha256:%x", sha256.Sum256(data))}

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
