package compare

// Checking steps against the scenario's pods and containers (validateStep and its helpers).

import (
	"encoding/json"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
)

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
