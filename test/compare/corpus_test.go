// Package compare_test checks the corpus of comparison scenarios run by `vk-cri compare`:
// every file parses strictly, its pods are valid v1.Pods, its steps make sense, and
// scenarios that use something vk-cri does not support yet say so in `known`.
package compare_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// Thresholds the corpus must meet.
const (
	minScenarios         = 30
	minExpectedToMatch   = 10
	defaultScenarioLimit = 120 * time.Second
	// A scenario should fit in about a minute of wall time; allow headroom for the timeouts.
	maxScenarioTimeout = 180 * time.Second
)

var categories = []string{"lifecycle", "failures", "env", "volumes", "probes", "security", "hooks", "termination", "hostile"}

// The only images that exist in the local registry.
var allowedImages = map[string]bool{
	"127.0.0.1:5000/vk-cri/busybox:latest": true,
	"127.0.0.1:5000/vk-cri/vktest:latest":  true,
	"127.0.0.1:5000/vk-cri/httpd:latest":   true,
	// The nonexistent image of the image pull error scenarios.
	"127.0.0.1:5000/vk-cri/does-not-exist:1.0": true,
}

// Images a scenario may use on purpose to provoke InvalidImageName.
var invalidImages = map[string]bool{
	"127.0.0.1:5000/vk-cri/Invalid_Name:latest": true,
}

// Issues that will implement what vk-cri does not do yet (README Features table).
const (
	issueExec     = 3 // the kubelet API (its authentication and authorization)
	issueLifecyle = 4 // hooks, activeDeadlineSeconds, termination messages, sidecars, init details
	issueEnv      = 5 // env valueFrom/envFrom/service links/$(VAR), resources, security context, DNS
	issueVolumes  = 6 // volume types vk-cri does not mount, volumeDevices
	issueProbes   = 7 // liveness, readiness, startup probes
)

var knownIssues = map[int]bool{issueExec: true, issueLifecyle: true, issueEnv: true, issueVolumes: true, issueProbes: true}

// foundByCompare starts the why of a known difference that running the corpus revealed.
const foundByCompare = "found by compare:"

// ---- file format ----

type scenario struct {
	Name        string            `json:"name"`
	Category    string            `json:"category"`
	Description string            `json:"description"`
	Known       *known            `json:"known,omitempty"`
	Timeout     string            `json:"timeout,omitempty"`
	Objects     []json.RawMessage `json:"objects,omitempty"`
	Pods        []json.RawMessage `json:"pods"`
	Steps       []step            `json:"steps"`
	// Compare tunes the comparison (compare.CompareOptions: ignore, eventCounts); the runner
	// validates it.
	Compare json.RawMessage `json:"compare,omitempty"`

	file string
	pods []*v1.Pod
	objs []object
}

type known struct {
	Issue int    `json:"issue"`
	Why   string `json:"why"`
}

type step struct {
	Wait   *waitStep   `json:"wait,omitempty"`
	Sleep  string      `json:"sleep,omitempty"`
	Exec   *execStep   `json:"exec,omitempty"`
	Update *updateStep `json:"update,omitempty"`
	Delete *deleteStep `json:"delete,omitempty"`
}

type waitStep struct {
	Pod     string `json:"pod"`
	For     string `json:"for"`
	Timeout string `json:"timeout,omitempty"`
}

type execStep struct {
	Pod       string   `json:"pod"`
	Container string   `json:"container"`
	Command   []string `json:"command"`
	Timeout   string   `json:"timeout,omitempty"`
}

type updateStep struct {
	Pod         string          `json:"pod"`
	Patch       json.RawMessage `json:"patch"`
	Subresource string          `json:"subresource"`
}

type deleteStep struct {
	Pod                string `json:"pod"`
	GracePeriodSeconds *int64 `json:"gracePeriodSeconds,omitempty"`
}

type object struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
}

// strictJSON decodes data into v, refusing unknown fields and trailing data.
func strictJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data after the JSON value")
	}
	return nil
}

func loadScenario(path string) (*scenario, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	// YAMLToJSON refuses duplicate keys; strictJSON refuses unknown fields.
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("YAML: %w", err)
	}
	sc := &scenario{file: path}
	if err := strictJSON(js, sc); err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	for i, p := range sc.Pods {
		pod := &v1.Pod{}
		if err := strictJSON(p, pod); err != nil {
			return nil, fmt.Errorf("pods[%d]: not a strict v1.Pod: %w", i, err)
		}
		sc.pods = append(sc.pods, pod)
	}
	for i, o := range sc.Objects {
		var obj object
		if err := json.Unmarshal(o, &obj); err != nil {
			return nil, fmt.Errorf("objects[%d]: %w", i, err)
		}
		var typed any
		switch obj.Kind {
		case "ConfigMap":
			typed = &v1.ConfigMap{}
		case "Secret":
			typed = &v1.Secret{}
		case "Service":
			typed = &v1.Service{}
		case "PersistentVolumeClaim":
			typed = &v1.PersistentVolumeClaim{}
		default:
			return nil, fmt.Errorf("objects[%d]: kind %q: only ConfigMap, Secret, Service and PersistentVolumeClaim are allowed", i, obj.Kind)
		}
		if err := strictJSON(o, typed); err != nil {
			return nil, fmt.Errorf("objects[%d] (%s): not a strict v1.%s: %w", i, obj.Kind, obj.Kind, err)
		}
		sc.objs = append(sc.objs, obj)
	}
	return sc, nil
}

func loadCorpus(t *testing.T) []*scenario {
	t.Helper()
	var files []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	var out []*scenario
	for _, f := range files {
		sc, err := loadScenario(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		out = append(out, sc)
	}
	if t.Failed() {
		t.FailNow()
	}
	return out
}

// ---- step conditions ----

var (
	simpleConditions = map[string]bool{"Running": true, "Ready": true, "Succeeded": true, "Failed": true, "Deleted": true, "Scheduled": true}
	terminalWaits    = map[string]bool{"Succeeded": true, "Failed": true, "Deleted": true}
	restartsRE       = regexp.MustCompile(`^Restarts:([a-z0-9]([-a-z0-9]*[a-z0-9])?)>=([0-9]+)$`)
	reasonRE         = regexp.MustCompile(`^(WaitingReason|TerminatedReason):([a-z0-9]([-a-z0-9]*[a-z0-9])?)=([A-Z][A-Za-z]*)$`)
	containerStateRE = regexp.MustCompile(`^(ContainerRunning|ContainerTerminated):([a-z0-9]([-a-z0-9]*[a-z0-9])?)$`)
	conditionRE      = regexp.MustCompile(`^Condition:([A-Za-z][A-Za-z0-9./_-]*)=(True|False|Unknown)$`)
)

// parseFor checks a wait condition and returns the container it names, if any.
func parseFor(s string) (container string, err error) {
	switch {
	case simpleConditions[s]:
		return "", nil
	case restartsRE.MatchString(s):
		m := restartsRE.FindStringSubmatch(s)
		if n, err := strconv.Atoi(m[3]); err != nil || n < 1 {
			return "", fmt.Errorf("restart count in %q must be a positive integer", s)
		}
		return m[1], nil
	case reasonRE.MatchString(s):
		return reasonRE.FindStringSubmatch(s)[2], nil
	case containerStateRE.MatchString(s):
		return containerStateRE.FindStringSubmatch(s)[2], nil
	case conditionRE.MatchString(s):
		return "", nil
	}
	return "", fmt.Errorf("unknown wait condition %q", s)
}

func TestParseFor(t *testing.T) {
	good := map[string]string{
		"Running": "", "Ready": "", "Succeeded": "", "Failed": "", "Deleted": "", "Scheduled": "",
		"ContainerRunning:c": "c", "ContainerTerminated:web-1": "web-1", "Restarts:c>=2": "c",
		"WaitingReason:c=CrashLoopBackOff": "c", "TerminatedReason:main=OOMKilled": "main",
		"Condition:Ready=False": "", "Condition:PodScheduled=True": "", "Condition:example.com/gate=True": "",
	}
	for in, want := range good {
		got, err := parseFor(in)
		if err != nil || got != want {
			t.Errorf("parseFor(%q) = %q, %v; want %q, nil", in, got, err, want)
		}
	}
	for _, in := range []string{"", "running", "Restarts:c>2", "Restarts:c>=0", "Restarts:c>=x", "WaitingReason:c", "WaitingReason:C=X",
		"Condition:Ready=yes", "ContainerRunning:", "Phase:Running"} {
		if _, err := parseFor(in); err == nil {
			t.Errorf("parseFor(%q) = nil error; want an error", in)
		}
	}
}

// ---- what vk-cri does not do yet ----

// unsupported lists what a pod (or the scenario around it) uses that the README's Features table
// says vk-cri does not do yet, each with the issue that will add it.
func unsupported(sc *scenario) map[string]int {
	found := map[string]int{}
	add := func(what string, issue int) { found[what] = issue }
	for _, pod := range sc.pods {
		spec := &pod.Spec
		for i := range spec.Volumes {
			if !mountable(&spec.Volumes[i]) {
				add("volume types vk-cri does not mount", issueVolumes)
			}
		}
		// Pod overhead (from a RuntimeClass) is not exercised; pod-level resources limit the pod
		// cgroup (package cm) and are supported, and so are user namespaces.
		if spec.Overhead != nil {
			add("pod overhead", issueEnv)
		}

		for i := range spec.InitContainers {
			containerUnsupported(&spec.InitContainers[i], add)
		}
		for i := range spec.Containers {
			containerUnsupported(&spec.Containers[i], add)
		}
	}
	return found
}

func containerUnsupported(c *v1.Container, add func(string, int)) {
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.FileKeyRef != nil {
			add("env from a volume file", issueEnv)
		}
	}
	if len(c.VolumeDevices) > 0 {
		add("volume devices", issueVolumes)
	}
}

// admissionOnlyLabelPrefix is the prefix of the node labels a pod's node selector or node
// affinity may name: no node carries them, so they never place a pod, they only show how each
// node's admission treats a pod it does not match.
const admissionOnlyLabelPrefix = "example.com/"

// picksNode tells whether the pod's node selector or affinity could choose between nodes: it
// names a label outside admissionOnlyLabelPrefix, or has pod (anti-)affinity.
func picksNode(spec *v1.PodSpec) bool {
	for k := range spec.NodeSelector {
		if !strings.HasPrefix(k, admissionOnlyLabelPrefix) {
			return true
		}
	}
	a := spec.Affinity
	if a == nil {
		return false
	}
	if a.PodAffinity != nil || a.PodAntiAffinity != nil {
		return true
	}
	if a.NodeAffinity == nil {
		return false
	}
	terms := []v1.NodeSelectorTerm{}
	if r := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution; r != nil {
		terms = append(terms, r.NodeSelectorTerms...)
	}
	for _, p := range a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
		terms = append(terms, p.Preference)
	}
	for _, term := range terms {
		if len(term.MatchFields) > 0 {
			return true
		}
		for _, e := range term.MatchExpressions {
			if !strings.HasPrefix(e.Key, admissionOnlyLabelPrefix) {
				return true
			}
		}
	}
	return false
}

func isZero(v any) bool {
	b, err := json.Marshal(v)
	return err == nil && string(b) == "{}"
}

// ---- the checks ----

func TestCorpus(t *testing.T) {
	corpus := loadCorpus(t)
	names := map[string]string{}
	perCategory := map[string]int{}
	expected := 0
	for _, sc := range corpus {
		t.Run(sc.file, func(t *testing.T) {
			checkScenario(t, sc)
		})
		if prev, dup := names[sc.Name]; dup {
			t.Errorf("%s: name %q already used by %s", sc.file, sc.Name, prev)
		}
		names[sc.Name] = sc.file
		perCategory[sc.Category]++
		if sc.Known == nil {
			expected++
		}
	}
	if len(corpus) < minScenarios {
		t.Errorf("%d scenarios; want at least %d", len(corpus), minScenarios)
	}
	if expected < minExpectedToMatch {
		t.Errorf("%d scenarios are expected to match (not known); want at least %d", expected, minExpectedToMatch)
	}
	for _, c := range categories {
		if perCategory[c] == 0 {
			t.Errorf("category %q has no scenario", c)
		}
	}
	t.Logf("%d scenarios, %d expected to match, per category: %v", len(corpus), expected, perCategory)
}

var nameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

func checkScenario(t *testing.T, sc *scenario) {
	base := strings.TrimSuffix(filepath.Base(sc.file), filepath.Ext(sc.file))
	if sc.Name == "" || sc.Name != base {
		t.Errorf("name %q must equal the file name %q", sc.Name, base)
	}
	if !nameRE.MatchString(sc.Name) {
		t.Errorf("name %q is not a DNS label", sc.Name)
	}
	if !contains(categories, sc.Category) {
		t.Errorf("category %q is not one of %v", sc.Category, categories)
	}
	if dir := filepath.Base(filepath.Dir(sc.file)); dir != sc.Category {
		t.Errorf("file is under %q but its category is %q", dir, sc.Category)
	}
	if strings.TrimSpace(sc.Description) == "" || !strings.HasSuffix(sc.Description, ".") {
		t.Errorf("description must be a sentence ending with a period: %q", sc.Description)
	}
	limit := defaultScenarioLimit
	if sc.Timeout != "" {
		d, err := time.ParseDuration(sc.Timeout)
		if err != nil || d <= 0 || d > maxScenarioTimeout {
			t.Errorf("timeout %q: want a duration in (0, %v]", sc.Timeout, maxScenarioTimeout)
		} else {
			limit = d
		}
	}

	// Known issues, and what needs one.
	need := unsupported(sc)
	if sc.Known != nil {
		if !knownIssues[sc.Known.Issue] {
			t.Errorf("known.issue %d is not one of the feature issues %v", sc.Known.Issue, sortedKeys(knownIssues))
		}
		if strings.TrimSpace(sc.Known.Why) == "" {
			t.Errorf("known.why is empty")
		}
		// A difference found by running the corpus against the kubelet (why starts with
		// "found by compare:") may concern something the README says vk-cri supports.
		if len(need) == 0 && !strings.HasPrefix(sc.Known.Why, foundByCompare) {
			t.Errorf("marked known (issue %d) but uses only what the README says vk-cri supports; "+
				"a difference seen when running the corpus starts its why with %q", sc.Known.Issue, foundByCompare)
		}
		issues := map[int]bool{}
		for _, i := range need {
			issues[i] = true
		}
		if len(need) > 0 && !issues[sc.Known.Issue] {
			t.Errorf("known.issue %d, but what it uses (%v) is for issue(s) %v", sc.Known.Issue, need, sortedKeys(issues))
		}
	} else if len(need) > 0 {
		t.Errorf("uses what vk-cri does not support yet, so it must be marked known: %v", need)
	}

	// Objects.
	objNames := map[string]bool{}
	for i, o := range sc.objs {
		if o.APIVersion != "v1" {
			t.Errorf("objects[%d]: apiVersion %q, want v1", i, o.APIVersion)
		}
		if o.Metadata.Name == "" || o.Metadata.Namespace != "" {
			t.Errorf("objects[%d]: want a name and no namespace, got %q/%q", i, o.Metadata.Namespace, o.Metadata.Name)
		}
		key := o.Kind + "/" + o.Metadata.Name
		if objNames[key] {
			t.Errorf("objects[%d]: %s defined twice", i, key)
		}
		objNames[key] = true
	}

	// Pods.
	if len(sc.pods) == 0 {
		t.Errorf("no pods")
	}
	pods := map[string]*v1.Pod{}
	for i, pod := range sc.pods {
		checkPod(t, fmt.Sprintf("pods[%d]", i), pod, sc.Known)
		if pods[pod.Name] != nil {
			t.Errorf("pods[%d]: pod name %q used twice", i, pod.Name)
		}
		pods[pod.Name] = pod
	}

	// Steps.
	if len(sc.Steps) == 0 {
		t.Fatalf("no steps")
	}
	lastFor := map[string]string{} // pod -> what its last step does
	for i, s := range sc.Steps {
		where := fmt.Sprintf("steps[%d]", i)
		n := 0
		if s.Wait != nil {
			n++
		}
		if s.Sleep != "" {
			n++
		}
		if s.Exec != nil {
			n++
		}
		if s.Update != nil {
			n++
		}
		if s.Delete != nil {
			n++
		}
		if n != 1 {
			t.Errorf("%s: want exactly one of wait, sleep, exec, update, delete; got %d", where, n)
			continue
		}
		switch {
		case s.Wait != nil:
			pod := pods[s.Wait.Pod]
			if pod == nil {
				t.Errorf("%s: wait on unknown pod %q", where, s.Wait.Pod)
				continue
			}
			c, err := parseFor(s.Wait.For)
			if err != nil {
				t.Errorf("%s: %v", where, err)
			} else if c != "" && !hasContainer(pod, c) {
				t.Errorf("%s: %q names container %q, which pod %q does not have", where, s.Wait.For, c, pod.Name)
			}
			if s.Wait.Timeout != "" {
				d, err := time.ParseDuration(s.Wait.Timeout)
				if err != nil || d <= 0 || d > limit {
					t.Errorf("%s: timeout %q: want a duration in (0, %v]", where, s.Wait.Timeout, limit)
				}
			}
			if terminalWaits[s.Wait.For] {
				lastFor[pod.Name] = "final"
			} else if lastFor[pod.Name] != "deleted" && lastFor[pod.Name] != "final" {
				// A wait changes nothing: a pod in a terminal phase stays there.
				lastFor[pod.Name] = "open"
			}
		case s.Sleep != "":
			d, err := time.ParseDuration(s.Sleep)
			if err != nil || d <= 0 || d > 30*time.Second {
				t.Errorf("%s: sleep %q: want a duration in (0, 30s]", where, s.Sleep)
			}
		case s.Exec != nil:
			pod := pods[s.Exec.Pod]
			if pod == nil {
				t.Errorf("%s: exec in unknown pod %q", where, s.Exec.Pod)
				continue
			}
			if !hasContainer(pod, s.Exec.Container) {
				t.Errorf("%s: exec in unknown container %q of pod %q", where, s.Exec.Container, pod.Name)
			}
			if len(s.Exec.Command) == 0 {
				t.Errorf("%s: exec without a command", where)
			}
			if s.Exec.Timeout != "" {
				if d, err := time.ParseDuration(s.Exec.Timeout); err != nil || d <= 0 || d > limit {
					t.Errorf("%s: exec timeout %q: want a duration in (0, %v]", where, s.Exec.Timeout, limit)
				}
			}
			lastFor[pod.Name] = "open"
		case s.Update != nil:
			pod := pods[s.Update.Pod]
			if pod == nil {
				t.Errorf("%s: update of unknown pod %q", where, s.Update.Pod)
				continue
			}
			// A strategic merge patch of a pod is a partial pod: it must decode strictly.
			var patch v1.Pod
			if err := strictJSON(s.Update.Patch, &patch); err != nil {
				t.Errorf("%s: patch is not a partial v1.Pod: %v", where, err)
			}
			switch s.Update.Subresource {
			case "", "status":
			case "resize":
				// In-place resize: only container resources change, of containers the pod has.
				if len(patch.Spec.Containers)+len(patch.Spec.InitContainers) == 0 {
					t.Errorf("%s: a resize update changes no container", where)
				}
				for _, c := range append(patch.Spec.Containers, patch.Spec.InitContainers...) {
					if !hasContainer(pod, c.Name) {
						t.Errorf("%s: resize of unknown container %q of pod %q", where, c.Name, pod.Name)
					}
				}
			case "ephemeralcontainers":
				// Later steps may name the ephemeral containers it adds.
				if len(patch.Spec.EphemeralContainers) == 0 {
					t.Errorf("%s: an ephemeralcontainers update adds no spec.ephemeralContainers", where)
				}
				for _, ec := range patch.Spec.EphemeralContainers {
					if !allowedImages[ec.Image] {
						t.Errorf("%s: ephemeral container %q: image %q is not in the local registry", where, ec.Name, ec.Image)
					}
				}
				pod.Spec.EphemeralContainers = append(pod.Spec.EphemeralContainers, patch.Spec.EphemeralContainers...)
			default:
				t.Errorf("%s: update.subresource %q is not \"status\", \"ephemeralcontainers\" or \"resize\"", where, s.Update.Subresource)
			}
			lastFor[pod.Name] = "open"
		case s.Delete != nil:
			pod := pods[s.Delete.Pod]
			if pod == nil {
				t.Errorf("%s: delete of unknown pod %q", where, s.Delete.Pod)
				continue
			}
			if g := s.Delete.GracePeriodSeconds; g != nil && (*g < 0 || *g > 60) {
				t.Errorf("%s: gracePeriodSeconds %d out of [0, 60]", where, *g)
			}
			lastFor[pod.Name] = "deleted"
		}
	}
	// Every pod ends in a comparable state: terminal, or deleted.
	for name := range pods {
		if st := lastFor[name]; st != "final" && st != "deleted" {
			t.Errorf("pod %q does not end with a wait for Succeeded/Failed/Deleted or a delete step", name)
		}
	}
	if last := sc.Steps[len(sc.Steps)-1]; last.Wait == nil && last.Delete == nil {
		t.Errorf("the last step must be a wait or a delete")
	}
}

func checkPod(t *testing.T, where string, pod *v1.Pod, kn *known) {
	t.Helper()
	if pod.APIVersion != "v1" || pod.Kind != "Pod" {
		t.Errorf("%s: apiVersion/kind %q/%q, want v1/Pod", where, pod.APIVersion, pod.Kind)
	}
	// A pod name is a DNS subdomain (up to 253 characters, dots allowed), as the API has it.
	if errs := validation.IsDNS1123Subdomain(pod.Name); len(errs) > 0 {
		t.Errorf("%s: pod name %q is not a DNS subdomain: %v", where, pod.Name, errs)
	}
	if pod.Namespace != "" || pod.GenerateName != "" {
		t.Errorf("%s: pods must not set namespace or generateName", where)
	}
	spec := &pod.Spec
	if spec.NodeName != "" || picksNode(spec) {
		t.Errorf("%s: pods must not pick their node (nodeName, nodeSelector, affinity): the tool does; only labels no node has (%s...) may be named, to show the node's admission refusing the pod", where, admissionOnlyLabelPrefix)
	}
	if spec.TerminationGracePeriodSeconds == nil {
		t.Errorf("%s: set terminationGracePeriodSeconds (small unless the scenario is about grace periods)", where)
	}
	sa := spec.AutomountServiceAccountToken
	if (sa == nil || *sa) && !strings.Contains(pod.Name+where, "token") && !mentionsToken(pod) {
		t.Errorf("%s: automountServiceAccountToken must be false unless the pod is about the token", where)
	}
	switch spec.RestartPolicy {
	case "", v1.RestartPolicyAlways, v1.RestartPolicyOnFailure, v1.RestartPolicyNever:
	default:
		t.Errorf("%s: restartPolicy %q", where, spec.RestartPolicy)
	}
	if len(spec.Containers) == 0 {
		t.Errorf("%s: no containers", where)
	}
	if len(spec.EphemeralContainers) > 0 {
		t.Errorf("%s: ephemeral containers cannot be created with the pod", where)
	}
	volumes := map[string]bool{}
	for _, v := range spec.Volumes {
		if volumes[v.Name] {
			t.Errorf("%s: volume %q defined twice", where, v.Name)
		}
		volumes[v.Name] = true
	}
	seen := map[string]bool{}
	all := append(append([]v1.Container{}, spec.InitContainers...), spec.Containers...)
	for i, c := range all {
		cw := fmt.Sprintf("%s container %q", where, c.Name)
		if !nameRE.MatchString(c.Name) {
			t.Errorf("%s: container name is not a DNS label", cw)
		}
		if seen[c.Name] {
			t.Errorf("%s: container name used twice", cw)
		}
		seen[c.Name] = true
		if !allowedImages[c.Image] && !invalidImages[c.Image] {
			t.Errorf("%s: image %q is not in the local registry's set", cw, c.Image)
		}
		switch c.ImagePullPolicy {
		case "", v1.PullAlways, v1.PullIfNotPresent, v1.PullNever:
		default:
			t.Errorf("%s: imagePullPolicy %q", cw, c.ImagePullPolicy)
		}
		for _, m := range c.VolumeMounts {
			if !volumes[m.Name] {
				t.Errorf("%s: mounts unknown volume %q", cw, m.Name)
			}
		}
		if c.RestartPolicy != nil && i >= len(spec.InitContainers) && len(c.RestartPolicyRules) == 0 &&
			*c.RestartPolicy == v1.ContainerRestartPolicy(spec.RestartPolicy) {
			t.Errorf("%s: restartPolicy repeats the pod's", cw)
		}
		for _, e := range c.Env {
			if e.Name == "" {
				t.Errorf("%s: env without a name", cw)
			}
		}
	}
}

func hasContainer(pod *v1.Pod, name string) bool {
	for _, c := range pod.Spec.InitContainers {
		if c.Name == name {
			return true
		}
	}
	for _, c := range pod.Spec.Containers {
		if c.Name == name {
			return true
		}
	}
	for _, c := range pod.Spec.EphemeralContainers {
		if c.Name == name {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[int]V) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

// The README's scenario table lists exactly the corpus, with the right category and known issue.
func TestReadmeTable(t *testing.T) {
	corpus := loadCorpus(t)
	raw, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	// Rows look like: | [`name`](category/name.yaml) | category | expected to match |
	rowRE := regexp.MustCompile("(?m)^\\| \\[`([a-z0-9-]+)`\\]\\(([a-z]+)/([a-z0-9-]+)\\.yaml\\) \\| ([a-z]+) \\| ([^|]+) \\|$")
	rows := map[string][2]string{}
	for _, m := range rowRE.FindAllStringSubmatch(string(raw), -1) {
		if _, dup := rows[m[1]]; dup {
			t.Errorf("README.md lists %q twice", m[1])
		}
		if m[2] != m[4] || m[3] != m[1] {
			t.Errorf("README.md row of %q links to %s/%s.yaml", m[1], m[2], m[3])
		}
		rows[m[1]] = [2]string{m[4], strings.TrimSpace(m[5])}
	}
	for _, sc := range corpus {
		row, ok := rows[sc.Name]
		if !ok {
			t.Errorf("README.md does not list scenario %q", sc.Name)
			continue
		}
		delete(rows, sc.Name)
		want := "expected to match"
		if sc.Known != nil {
			want = fmt.Sprintf("#%d", sc.Known.Issue)
		}
		if row[0] != sc.Category || !strings.HasPrefix(row[1], want) {
			t.Errorf("README.md row of %q: %q, %q; want %q, %q…", sc.Name, row[0], row[1], sc.Category, want)
		}
	}
	for name := range rows {
		t.Errorf("README.md lists %q, which is not in the corpus", name)
	}
}

// The feature detection that decides what must be marked known.
func TestUnsupported(t *testing.T) {
	no := false
	plain := func() *v1.Pod {
		return &v1.Pod{Spec: v1.PodSpec{
			AutomountServiceAccountToken: &no,
			Containers: []v1.Container{{Name: "c", Image: "i", Command: []string{"sh", "-c", "echo $HOME `pwd` $(cat /x) $((1+2)) $?"},
				Env:             []v1.EnvVar{{Name: "A", Value: "b"}},
				SecurityContext: &v1.SecurityContext{RunAsUser: new(int64(1000)), Privileged: &no}}},
		}}
	}
	if got := unsupported(&scenario{pods: []*v1.Pod{plain()}}); len(got) != 0 {
		t.Errorf("plain pod: unsupported = %v, want none", got)
	}
	cases := map[string]func(p *v1.Pod, sc *scenario){
		"volume types vk-cri does not mount": func(p *v1.Pod, sc *scenario) {
			p.Spec.Volumes = []v1.Volume{{Name: "v", VolumeSource: v1.VolumeSource{NFS: &v1.NFSVolumeSource{}}}}
		},
		"volume devices": func(p *v1.Pod, sc *scenario) {
			p.Spec.Containers[0].VolumeDevices = []v1.VolumeDevice{{Name: "v", DevicePath: "/dev/x"}}
		},
		"env from a volume file": func(p *v1.Pod, sc *scenario) {
			p.Spec.Containers[0].Env = []v1.EnvVar{{Name: "A", ValueFrom: &v1.EnvVarSource{FileKeyRef: &v1.FileKeySelector{}}}}
		},
		"pod overhead": func(p *v1.Pod, sc *scenario) { p.Spec.Overhead = v1.ResourceList{} },
	}
	for want, mutate := range cases {
		p := plain()
		sc := &scenario{}
		mutate(p, sc)
		sc.pods = []*v1.Pod{p}
		if _, ok := unsupported(sc)[want]; !ok {
			t.Errorf("%s: unsupported = %v, want it listed", want, unsupported(sc))
		}
	}
}

// mountable reports whether vk-cri mounts this type of volume (provider/volumes).
func mountable(v *v1.Volume) bool {
	src := &v.VolumeSource
	switch {
	case src.EmptyDir != nil, src.ConfigMap != nil, src.Secret != nil, src.DownwardAPI != nil,
		src.HostPath != nil, src.PersistentVolumeClaim != nil:
		return true
	case src.Projected != nil:
		for _, s := range src.Projected.Sources {
			if s.ServiceAccountToken == nil && s.ConfigMap == nil && s.Secret == nil && s.DownwardAPI == nil {
				return false
			}
		}
		return true
	}
	return false
}

// mentionsToken reports whether a container reads the service-account token directory, which
// is what a pod about the token does.
func mentionsToken(pod *v1.Pod) bool {
	for _, c := range pod.Spec.Containers {
		for _, s := range append(append([]string{}, c.Command...), c.Args...) {
			if strings.Contains(s, "serviceaccount") {
				return true
			}
		}
	}
	return false
}

func TestPicksNode(t *testing.T) {
	required := func(key string) *v1.Affinity {
		return &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
			NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{Key: key, Operator: v1.NodeSelectorOpExists}}}}}}}
	}
	for _, tc := range []struct {
		name string
		spec v1.PodSpec
		want bool
	}{
		{"nothing", v1.PodSpec{}, false},
		{"selector on a label no node has", v1.PodSpec{NodeSelector: map[string]string{"example.com/disk": "ssd"}}, false},
		{"selector on the hostname", v1.PodSpec{NodeSelector: map[string]string{v1.LabelHostname: "ref"}}, true},
		{"affinity on a label no node has", v1.PodSpec{Affinity: required("example.com/x")}, false},
		{"affinity on the zone", v1.PodSpec{Affinity: required(v1.LabelTopologyZone)}, true},
		{"pod affinity", v1.PodSpec{Affinity: &v1.Affinity{PodAffinity: &v1.PodAffinity{}}}, true},
	} {
		if got := picksNode(&tc.spec); got != tc.want {
			t.Errorf("%s: picksNode = %v, want %v", tc.name, got, tc.want)
		}
	}
}
