package provider

import (
	"fmt"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// The scheduler plugins whose filters the kubelet's predicate admission applies, and their
// failure texts (k8s.io/kubernetes pkg/scheduler/framework/plugins: nodeaffinity, nodename,
// nodeports, tainttoleration). A rejection's reason is the plugin's name.
const (
	predicateNodeAffinity    = "NodeAffinity"
	predicateNodeName        = "NodeName"
	predicateNodePorts       = "NodePorts"
	predicateTaintToleration = "TaintToleration"

	nodeAffinityMismatch = "node(s) didn't match Pod's node affinity/selector"
	nodeNameMismatch     = "node(s) didn't match the requested node name"
	nodePortsTaken       = "node(s) didn't have free ports for the requested pod ports"
	taintsNotTolerated   = "node(s) had taints that the pod didn't tolerate"
)

// predicateFailure is a failed predicate as the kubelet reports it (PredicateFailureError):
// reason the predicate's name, message "Predicate <name> failed: <text>".
func predicateFailure(name, text string) admissionRejection {
	return admissionRejection{Reason: name, Message: fmt.Sprintf("Predicate %s failed: %s", name, text)}
}

// generalPredicates are the kubelet's general filter (pkg/kubelet/lifecycle/predicate.go
// generalFilter, with the scheduler's AdmissionCheck): every failure, in its order - resource
// fit (pods, cpu, memory, ephemeral-storage, scalar resources), required node affinity and node
// selector, node name, host ports - then the node's NoExecute taints the pod does not tolerate
// (the kubelet ignores NoSchedule and PreferNoSchedule ones, which only the scheduler honours).
// others are the node's other admitted pods that are not terminated. The kubelet reports the
// first failure only; the others tell whether a fresh look at the node's labels may help.
//
// The kubelet skips the taint check for static pods; vk-cri runs none.
func generalPredicates(pod *v1.Pod, node *v1.Node, others []*v1.Pod) []admissionRejection {
	var out []admissionRejection
	allocatable := node.Status.Allocatable
	for _, r := range resourceFit(withoutMissingExtendedResources(pod, allocatable), allocatable, others) {
		out = append(out, r.rejection())
	}
	// An invalid selector does not match: the API validates them, so only the match counts.
	if match, _ := nodeaffinity.GetRequiredNodeAffinity(pod).Match(node); !match {
		out = append(out, predicateFailure(predicateNodeAffinity, nodeAffinityMismatch))
	}
	if pod.Spec.NodeName != "" && pod.Spec.NodeName != node.Name {
		out = append(out, predicateFailure(predicateNodeName, nodeNameMismatch))
	}
	if !hostPortsFit(pod, others) {
		out = append(out, predicateFailure(predicateNodePorts, nodePortsTaken))
	}
	noExecute := func(t *v1.Taint) bool { return t.Effect == v1.TaintEffectNoExecute }
	// TaintTolerationComparisonOperators is alpha and off in v1.37.
	if _, untolerated := corev1helpers.FindMatchingUntoleratedTaint(logr.Discard(), node.Spec.Taints, pod.Spec.Tolerations, noExecute, false); untolerated {
		out = append(out, predicateFailure(predicateTaintToleration, taintsNotTolerated))
	}
	return out
}

// onlyNodeAffinity tells whether every failure is the node affinity's: then the kubelet looks
// at the node again, fetched from the API rather than its cache, before refusing the pod (its
// labels may just have changed).
func onlyNodeAffinity(failures []admissionRejection) bool {
	for _, f := range failures {
		if f.Reason != predicateNodeAffinity {
			return false
		}
	}
	return len(failures) > 0
}

// admitPredicates is the kubelet's predicate admit handler on a pod, given the node (nil: the
// node could not be read) and the node's other admitted, active pods: first the checks
// preemption cannot help (operating system label, then spec.os), then the general predicates,
// the first failure of which refuses the pod. When the node affinity alone fails, the node is
// looked at again through fresh (the API, not a cache) as the kubelet does. nil admits the pod.
//
// Not done (see the report of issue 21): the kubelet's critical-pod preemption, which evicts
// lower-priority pods to make room for a system-critical pod short of resources; and the
// SupplementalGroupsPolicy=Strict check, which needs the node to report the runtime's
// supplemental groups feature first.
func admitPredicates(pod *v1.Pod, nodeOS string, node *v1.Node, others []*v1.Pod, fresh func() (*v1.Node, error)) *admissionRejection {
	if node == nil {
		return &admissionRejection{Reason: reasonInvalidNodeInfo, Message: "Kubelet cannot get node info."}
	}
	if r := admitPodOS(pod, nodeOS); r != nil {
		return r
	}
	failures := generalPredicates(pod, node, others)
	if onlyNodeAffinity(failures) && fresh != nil {
		if n, err := fresh(); err == nil && n != nil {
			failures = generalPredicates(pod, n, others)
		}
	}
	if len(failures) > 0 {
		return &failures[0]
	}
	return nil
}

// reasonInvalidNodeInfo is the kubelet's rejection when it cannot read its own node.
const reasonInvalidNodeInfo = "InvalidNodeInfo"
