package compare

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"

	v1 "k8s.io/api/core/v1"
)

// StatusShape is the shape of a pod's final status, which the timeline's reduced snapshots do
// not show: the set of its JSON field paths (a field one node agent writes and the other does
// not is a difference, whatever its value), and the values of the fields that two correct node
// agents write alike whatever the timing: each container's resources, allocatedResources and
// volumeMounts, the pod's resources, allocatedResources and qosClass. The pod's resources are
// left out where the kubelet's own timing decides them: all of them once the pod finished, its
// memory limit while it runs when podMemoryLimitVaries.
type StatusShape struct {
	// Paths are the JSON paths of the status's fields, sorted. A list element is named by its
	// mountPath, name or type ("containerStatuses[web].state.running.startedAt"), else "[]".
	Paths []string `json:"paths"`
	// Values are compact JSON by path, with the service-account token volume's random suffix
	// normalised (kube-api-access-<suffix>).
	Values map[string]string `json:"values,omitempty"`
}

// podMemoryLimitVaries reports whether the memory limit of a pod's status.resources depends on
// the kubelet's timing: when its pod cgroup has no memory limit (some container declares none,
// nor does the pod), the kubelet reports the containers' sum until a sync after the pod runs
// reads the cgroup back (on cgroup v1 its largest value, 9007199254740988Ki), which its periodic
// resync does within about a minute, or never when the pod's cgroup is gone by then.
func podMemoryLimitVaries(pod *v1.Pod) bool {
	if pod.Spec.Resources != nil && !pod.Spec.Resources.Limits.Memory().IsZero() {
		return false
	}
	for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			if list[i].Resources.Limits.Memory().IsZero() {
				return true
			}
		}
	}
	return false
}

var reTokenVolume = regexp.MustCompile(`kube-api-access-` + k8sRand + `{5}\b`)

// ShapeOf is the shape of a pod's status. It is a pure function of the pod.
func ShapeOf(pod *v1.Pod) *StatusShape {
	st := pod.Status.DeepCopy()
	switch {
	case st.Phase == v1.PodSucceeded || st.Phase == v1.PodFailed:
		// The kubelet's last syncs of a finished pod read its pod cgroup back while the pod's
		// teardown removes it, and keep earlier values only while its cached status still
		// says Running: what the final resources hold is its timing (the same BestEffort pod
		// ends with {} or with the cgroup's memory limit, a Burstable one with or without its
		// cpu limit). That it writes them is still compared.
		if st.Resources != nil {
			st.Resources = &v1.ResourceRequirements{}
		}
		// The last PodReadyToStartContainers of a finished pod is True (no reason, no message)
		// or False (PodSandboxNotReady) from run to run on the kubelet, the race the timeline
		// leaves out too (timeline.go, "The last PodReadyToStartContainers of a finished
		// pod"): its reason and message are not part of the shape.
		for i := range st.Conditions {
			if st.Conditions[i].Type == v1.PodReadyToStartContainers {
				st.Conditions[i].Reason, st.Conditions[i].Message = "", ""
			}
		}
	case st.Resources != nil && podMemoryLimitVaries(pod):
		delete(st.Resources.Limits, v1.ResourceMemory)
	}
	s := &StatusShape{Paths: []string{}, Values: map[string]string{}}
	raw, err := json.Marshal(st)
	if err != nil {
		s.Values["error"] = err.Error()
		return s
	}
	var tree any
	if err := json.Unmarshal(raw, &tree); err != nil {
		s.Values["error"] = err.Error()
		return s
	}
	seen := map[string]bool{}
	walkPaths("", tree, seen)
	for p := range seen {
		s.Paths = append(s.Paths, p)
	}
	sort.Strings(s.Paths)

	put := func(key string, v any, present bool) {
		if !present {
			return
		}
		b, err := json.Marshal(v)
		if err != nil {
			b = []byte(err.Error())
		}
		s.Values[key] = reTokenVolume.ReplaceAllString(string(b), "kube-api-access-"+phSuffix)
	}
	put("resources", st.Resources, st.Resources != nil)
	put("allocatedResources", st.AllocatedResources, len(st.AllocatedResources) > 0)
	put("qosClass", st.QOSClass, st.QOSClass != "")
	for _, list := range []struct {
		field    string
		statuses []v1.ContainerStatus
	}{
		{"initContainerStatuses", st.InitContainerStatuses},
		{"containerStatuses", st.ContainerStatuses},
		{"ephemeralContainerStatuses", st.EphemeralContainerStatuses},
	} {
		for _, cs := range list.statuses {
			base := fmt.Sprintf("%s[%s].", list.field, cs.Name)
			put(base+"resources", cs.Resources, cs.Resources != nil)
			put(base+"allocatedResources", cs.AllocatedResources, len(cs.AllocatedResources) > 0)
			put(base+"volumeMounts", cs.VolumeMounts, len(cs.VolumeMounts) > 0)
		}
	}
	return s
}

// walkPaths adds the path of every field below v (leaves and empty objects alike).
func walkPaths(prefix string, v any, out map[string]bool) {
	switch t := v.(type) {
	case map[string]any:
		if len(t) == 0 && prefix != "" {
			out[prefix] = true
		}
		for k, child := range t {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			walkPaths(p, child, out)
		}
	case []any:
		if len(t) == 0 {
			out[prefix] = true
		}
		for _, child := range t {
			walkPaths(prefix+"["+elementName(child)+"]", child, out)
		}
	default:
		out[prefix] = true
	}
}

// elementName names a list element by the field that identifies it, normalised.
func elementName(v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		return ""
	}
	for _, key := range []string{"mountPath", "name", "type"} {
		if s, ok := m[key].(string); ok {
			return reTokenVolume.ReplaceAllString(s, "kube-api-access-"+phSuffix)
		}
	}
	return ""
}

// shapeDiffs compares two final status shapes: the paths only one has, then the values.
func (d *differ) shape(path string, a, b *StatusShape) {
	if a == nil || b == nil {
		if a != nil || b != nil {
			d.value(path, shapeSummary(a), shapeSummary(b))
		}
		return
	}
	inA := map[string]bool{}
	for _, p := range a.Paths {
		inA[p] = true
	}
	inB := map[string]bool{}
	for _, p := range b.Paths {
		inB[p] = true
		if !inA[p] {
			d.value(path+".paths."+p, Absent, "present")
		}
	}
	for _, p := range a.Paths {
		if !inB[p] {
			d.value(path+".paths."+p, "present", Absent)
		}
	}
	keys := map[string]bool{}
	for k := range a.Values {
		keys[k] = true
	}
	for k := range b.Values {
		keys[k] = true
	}
	for _, k := range sortedKeys(keys) {
		d.value(path+".values."+k, orAbsent(a.Values[k]), orAbsent(b.Values[k]))
	}
}

func shapeSummary(s *StatusShape) string {
	if s == nil {
		return Absent
	}
	return fmt.Sprintf("%d fields", len(s.Paths))
}
