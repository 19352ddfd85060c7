package compare

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/vk-cri/vk-cri/internal/golden"
)

func TestLoadSampleScenarios(t *testing.T) {
	all, err := LoadDir("testdata/scenarios")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range all {
		ids = append(ids, s.ID())
	}
	want := "failures/crashloop-backoff failures/restart-never-exit1 lifecycle/hello-succeeded termination/serve-exec-delete"
	if got := strings.Join(ids, " "); got != want {
		t.Fatalf("scenarios = %s, want %s", got, want)
	}
	byName := map[string]*Scenario{}
	for _, s := range all {
		byName[s.Name] = s
	}

	hello := byName["hello-succeeded"]
	if hello.Timeout != 60*time.Second || len(hello.Objects) != 2 || len(hello.Pods) != 1 || len(hello.Steps) != 2 || hello.Steps[1].Sleep != time.Second {
		t.Errorf("hello-succeeded decoded wrong: %+v", hello)
	}
	if _, ok := hello.Objects[0].(*v1.ConfigMap); !ok {
		t.Errorf("objects[0] is %T, want a ConfigMap", hello.Objects[0])
	}
	if _, ok := hello.Objects[1].(*v1.Service); !ok {
		t.Errorf("objects[1] is %T, want a Service", hello.Objects[1])
	}
	if w := hello.Steps[0].Wait; w == nil || w.For.Kind != WaitSucceeded || w.Timeout != 45*time.Second {
		t.Errorf("hello-succeeded step 0 = %+v", hello.Steps[0])
	}

	sed := byName["serve-exec-delete"]
	var kinds []string
	for _, st := range sed.Steps {
		kinds = append(kinds, st.String())
	}
	wantSteps := `wait web Ready | update web {"metadata":{"labels":{"touched":"yes"}}} | exec web/server /vktest hostname | delete web grace=5s | wait web Deleted`
	if got := strings.Join(kinds, " | "); got != wantSteps {
		t.Errorf("serve-exec-delete steps:\n got %s\nwant %s", got, wantSteps)
	}
	if crash := byName["crashloop-backoff"]; crash.Steps[0].Wait.For.Reason != "CrashLoopBackOff" || len(crash.Steps) != 1 {
		t.Errorf("crashloop-backoff steps = %+v", crash.Steps)
	}
	if s := byName["restart-never-exit1"]; s.Known != nil || s.Timeout != 60*time.Second {
		t.Errorf("restart-never-exit1 = %+v", s)
	}

	sel := Select(all, regexp.MustCompile(`^failures/`))
	if len(sel) != 2 {
		t.Errorf("--run ^failures/ selected %d scenarios, want 2", len(sel))
	}
}

func TestScenarioDefaultsAndOptionalFields(t *testing.T) {
	src := `
name: defaults
category: hooks
description: x
known: {issue: 4, why: preStop hooks are not implemented}
compare: {eventCounts: true, ignore: ["pods/*/logs"]}
pods:
  - {apiVersion: v1, kind: Pod, metadata: {name: main}, spec: {containers: [{name: c, image: busybox}]}}
steps:
  - wait: {pod: main, for: "Restarts:c>=3"}
  - wait: {pod: main, for: "Condition:PodReadyToStartContainers=True"}
  - exec: {pod: main, command: ["true"], timeout: 5s}
  - delete: {pod: main}
  - sleep: 2
`
	s, err := Parse("x/defaults.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if s.Timeout != DefaultScenarioTimeout {
		t.Errorf("timeout = %s, want the default", s.Timeout)
	}
	if s.Known == nil || s.Known.Issue != 4 || !s.Compare.EventCounts || len(s.Compare.Ignore) != 1 {
		t.Errorf("known/compare = %+v %+v", s.Known, s.Compare)
	}
	if w := s.Steps[0].Wait; w.For.Container != "c" || w.For.Count != 3 || w.Timeout != 0 {
		t.Errorf("steps[0] = %+v", w)
	}
	if w := s.Steps[1].Wait; w.For.Condition != "PodReadyToStartContainers" || w.For.Status != "True" {
		t.Errorf("steps[1] = %+v", w)
	}
	if e := s.Steps[2].Exec; e.Timeout != 5*time.Second || e.Container != "" {
		t.Errorf("steps[2] = %+v", e)
	}
	if d := s.Steps[3].Delete; d.GracePeriodSeconds != nil {
		t.Errorf("steps[3] = %+v", d)
	}
	if s.Steps[4].Sleep != 2*time.Second {
		t.Errorf("a bare number of seconds: sleep = %s", s.Steps[4].Sleep)
	}
}

func TestParseWaitFor(t *testing.T) {
	good := map[string]WaitFor{
		"Running":                         {Kind: WaitRunning},
		"Deleted":                         {Kind: WaitDeleted},
		"Scheduled":                       {Kind: WaitScheduled},
		"ContainerRunning:c":              {Kind: WaitContainerRunning, Container: "c"},
		"ContainerTerminated:init-1":      {Kind: WaitContainerTerm, Container: "init-1"},
		"Restarts:c>=0":                   {Kind: WaitRestarts, Container: "c"},
		"Restarts:web>=12":                {Kind: WaitRestarts, Container: "web", Count: 12},
		"WaitingReason:c=ErrImagePull":    {Kind: WaitWaitingReason, Container: "c", Reason: "ErrImagePull"},
		"TerminatedReason:c=OOMKilled":    {Kind: WaitTerminatedReason, Container: "c", Reason: "OOMKilled"},
		"Condition:Ready=False":           {Kind: WaitConditionKindValue, Condition: "Ready", Status: "False"},
		"Condition:DisruptionTarget=True": {Kind: WaitConditionKindValue, Condition: "DisruptionTarget", Status: "True"},
	}
	for in, want := range good {
		got, err := ParseWaitFor(in)
		want.Raw = in
		if err != nil || got != want {
			t.Errorf("ParseWaitFor(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "running", "Ready:c", "ContainerRunning", "ContainerRunning:", "Restarts:c", "Restarts:c>=-1",
		"Restarts:>=1", "WaitingReason:c", "WaitingReason:=X", "Condition:Ready", "Condition:Ready=yes", "Phase:Running"} {
		if _, err := ParseWaitFor(in); err == nil {
			t.Errorf("ParseWaitFor(%q) accepted", in)
		}
	}
}

// Every file under testdata/invalid fails with the errors in its .err golden file.
func TestInvalidScenarios(t *testing.T) {
	files, err := filepath.Glob("testdata/invalid/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no invalid fixtures: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			_, err := LoadFile(f)
			if err == nil {
				t.Fatal("loaded without error")
			}
			if !strings.HasPrefix(err.Error(), f+": ") {
				t.Errorf("error does not start with the file name: %v", err)
			}
			golden.Check(t, strings.TrimSuffix(f, ".yaml")+".err", []byte(err.Error()+"\n"))
		})
	}
}

func TestLoadDirErrors(t *testing.T) {
	dir := t.TempDir()
	pod := "pods:\n  - {apiVersion: v1, kind: Pod, metadata: {name: main}, spec: {containers: [{name: c, image: busybox}]}}\n"
	write := func(path, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, path)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, path), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a/same.yaml", "name: same\ncategory: env\ndescription: x\n"+pod)
	write("b/same.yaml", "name: same\ncategory: env\ndescription: desc y\n"+pod)
	write("b/broken.yaml", "name: broken\ncategory: env\n"+pod)
	write(".hidden/ignored.yaml", "not: a scenario")
	write("_drafts/ignored.yaml", "not: a scenario")
	write("README.md", "# not a scenario")
	_, err := LoadDir(dir)
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, want := range []string{
		filepath.Join(dir, "b/same.yaml") + `: name: "same" is already the name of ` + filepath.Join(dir, "a/same.yaml"),
		filepath.Join(dir, "b/broken.yaml") + ": description: missing",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "ignored") {
		t.Errorf("hidden or _ directories were loaded:\n%s", msg)
	}
	if _, err := LoadDir(filepath.Join(dir, "nothing")); err == nil {
		t.Error("a missing directory loaded")
	}
	empty := t.TempDir()
	if _, err := LoadDir(empty); err == nil || !strings.Contains(err.Error(), "no *.yaml files") {
		t.Errorf("empty directory: %v", err)
	}
}

// An update of the ephemeralcontainers subresource adds ephemeral containers that later steps
// may wait on and exec in.
func TestEphemeralContainersUpdateStep(t *testing.T) {
	const src = `
name: debug
category: lifecycle
description: kubectl debug.
pods:
  - {apiVersion: v1, kind: Pod, metadata: {name: main}, spec: {containers: [{name: c, image: busybox}]}}
steps:
  - wait: {pod: main, for: Running}
  - update:
      pod: main
      subresource: ephemeralcontainers
      patch: {spec: {ephemeralContainers: [{name: dbg, image: busybox, targetContainerName: c}]}}
  - wait: {pod: main, for: "ContainerRunning:dbg"}
  - exec: {pod: main, container: dbg, command: [ps]}
  - delete: {pod: main}
`
	sc, err := Parse("lifecycle/debug.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	u := sc.Steps[1].Update
	if u == nil || u.Subresource != SubresourceEphemeralContainers {
		t.Fatalf("step 1 = %+v", sc.Steps[1])
	}
	want := `update main/ephemeralcontainers {"spec":{"ephemeralContainers":[{"image":"busybox","name":"dbg","targetContainerName":"c"}]}}`
	if got := sc.Steps[1].String(); got != want {
		t.Errorf("step 1 = %s, want %s", got, want)
	}
	if got := sc.Steps[3].String(); got != "exec main/dbg ps" {
		t.Errorf("step 3 = %s", got)
	}
}
