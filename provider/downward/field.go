package downward

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// RuntimeInfo is what a fieldRef can name that the pod object does not hold yet when the
// container is created: the sandbox's IPs and the node's IPs.
type RuntimeInfo struct {
	PodIPs  []string
	HostIPs []string
}

// FieldValue resolves a fieldRef of the pod. The apiVersion must be v1 (empty means v1, as
// defaulting does). Unsupported paths and malformed subscripts are errors.
func FieldValue(pod *v1.Pod, fs *v1.ObjectFieldSelector, rt RuntimeInfo) (string, error) {
	if fs == nil {
		return "", fmt.Errorf("fieldRef is empty")
	}
	if fs.APIVersion != "" && fs.APIVersion != "v1" {
		return "", fmt.Errorf("unsupported pod version: %s", fs.APIVersion)
	}
	path, key, subscripted := SplitSubscript(fs.FieldPath)
	if subscripted {
		switch path {
		case "metadata.annotations":
			// Annotation keys may use upper case; the key format is checked case-insensitively.
			if errs := validation.IsQualifiedName(strings.ToLower(key)); len(errs) > 0 {
				return "", fmt.Errorf("invalid key subscript in %s: %s", fs.FieldPath, strings.Join(errs, ";"))
			}
			return pod.Annotations[key], nil
		case "metadata.labels":
			if errs := validation.IsQualifiedName(key); len(errs) > 0 {
				return "", fmt.Errorf("invalid key subscript in %s: %s", fs.FieldPath, strings.Join(errs, ";"))
			}
			return pod.Labels[key], nil
		}
		return "", fmt.Errorf("field label does not support subscript: %s", fs.FieldPath)
	}
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "metadata.labels":
		return FormatMap(pod.Labels), nil
	case "metadata.annotations":
		return FormatMap(pod.Annotations), nil
	case "spec.nodeName", "spec.host":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "spec.restartPolicy":
		return string(pod.Spec.RestartPolicy), nil
	case "spec.schedulerName":
		return pod.Spec.SchedulerName, nil
	case "status.phase":
		return string(pod.Status.Phase), nil
	case "status.podIP":
		return first(rt.PodIPs), nil
	case "status.podIPs":
		return strings.Join(rt.PodIPs, ","), nil
	case "status.hostIP":
		if len(rt.HostIPs) == 0 {
			return "", fmt.Errorf("the node has no IP address")
		}
		return rt.HostIPs[0], nil
	case "status.hostIPs":
		if len(rt.HostIPs) == 0 {
			return "", fmt.Errorf("the node has no IP address")
		}
		return strings.Join(rt.HostIPs, ","), nil
	}
	return "", fmt.Errorf("field label not supported: %s", fs.FieldPath)
}

// SplitSubscript splits "metadata.labels['key']" into ("metadata.labels", "key", true); a path
// without a subscript comes back unchanged with false.
func SplitSubscript(fieldPath string) (path, key string, ok bool) {
	inner, found := strings.CutSuffix(fieldPath, "']")
	if !found {
		return fieldPath, "", false
	}
	path, key, found = strings.Cut(inner, "['")
	if !found || path == "" {
		return fieldPath, "", false
	}
	return path, key, true
}

// FormatMap renders labels or annotations one per line, sorted by key, as key="value" with the
// value Go-quoted: the format of the downward API's whole-map fields.
func FormatMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(strconv.Quote(m[k]))
	}
	return b.String()
}

func first(list []string) string {
	if len(list) == 0 {
		return ""
	}
	return list[0]
}
