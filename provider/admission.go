package provider

import (
	"fmt"
	"runtime"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/node/util/sysctl"
)

// reasonSysctlForbidden is the kubelet's rejection reason for a pod with a sysctl it does not
// allow.
const reasonSysctlForbidden = "SysctlForbidden"

// safeSysctls are the sysctls the kubelet allows every pod: namespaced, and without effect on
// other pods (all of them are namespaced on the kernels vk-cri supports, 4.15 and later).
var safeSysctls = []string{
	"kernel.shm_rmid_forced",
	"net.ipv4.ip_local_port_range",
	"net.ipv4.tcp_syncookies",
	"net.ipv4.ping_group_range",
	"net.ipv4.ip_unprivileged_port_start",
	"net.ipv4.ip_local_reserved_ports",
	"net.ipv4.tcp_keepalive_time",
	"net.ipv4.tcp_fin_timeout",
	"net.ipv4.tcp_keepalive_intvl",
	"net.ipv4.tcp_keepalive_probes",
	"net.ipv4.tcp_rmem",
	"net.ipv4.tcp_wmem",
	"net.ipv4.tcp_slow_start_after_idle",
	"net.ipv4.tcp_notsent_lowat",
}

// sysctlPolicy is the set of sysctls pods may set: the safe ones and the unsafe ones the node's
// --allowed-unsafe-sysctls names (exactly, or by a prefix ending in '*').
type sysctlPolicy struct {
	exact    map[string]sysctl.Namespace
	prefixes map[string]sysctl.Namespace
}

// ValidateSysctlPatterns checks --allowed-unsafe-sysctls: each entry must be a sysctl known to
// be namespaced, or a prefix of such sysctls ending in '*'.
func ValidateSysctlPatterns(patterns []string) error {
	_, err := newSysctlPolicy(patterns)
	return err
}

func newSysctlPolicy(allowedUnsafe []string) (sysctlPolicy, error) {
	p := sysctlPolicy{exact: map[string]sysctl.Namespace{}, prefixes: map[string]sysctl.Namespace{}}
	for _, pattern := range append(append([]string(nil), safeSysctls...), allowedUnsafe...) {
		if strings.Contains(strings.TrimSuffix(pattern, "*"), "*") || pattern == "" {
			return p, fmt.Errorf("sysctl %q: only a trailing '*' may be used as a wildcard", pattern)
		}
		ns, name, prefixed := sysctl.GetNamespace(pattern)
		if ns == sysctl.UnknownNamespace {
			return p, fmt.Errorf("the sysctls %q are not known to be namespaced", name)
		}
		if prefixed {
			p.prefixes[name] = ns
		} else {
			p.exact[name] = ns
		}
	}
	return p, nil
}

// check reports why a pod's sysctl is forbidden: not allowed on this node, or a network or IPC
// sysctl of a pod that shares that namespace with the host.
func (p sysctlPolicy) check(name string, pod *v1.Pod) error {
	name = sysctl.NormalizeName(name)
	ns, ok := p.exact[name]
	if !ok {
		for prefix, pns := range p.prefixes {
			if strings.HasPrefix(name, prefix) {
				ns, ok = pns, true
				break
			}
		}
	}
	if !ok {
		return fmt.Errorf("%q not allowlisted", name)
	}
	hostUsers := pod.Spec.HostUsers == nil || *pod.Spec.HostUsers
	if (ns == sysctl.IPCNamespace && pod.Spec.HostIPC) || (ns == sysctl.NetNamespace && pod.Spec.HostNetwork) ||
		(ns == sysctl.UserNamespace && hostUsers) {
		return fmt.Errorf("%q not allowed with host %s enabled", name, ns)
	}
	return nil
}

// admissionRejection is why the node refuses a pod before running anything of it: its reason
// and message, or ok.
type admissionRejection struct {
	Reason, Message string
}

// admitPod applies the node's admission checks the kubelet makes on the pod alone, in the
// kubelet's order: its sysctls, then its operating system; nil admits the pod.
func admitPod(pod *v1.Pod, sysctls sysctlPolicy) *admissionRejection {
	if pod.Spec.SecurityContext != nil {
		for _, s := range pod.Spec.SecurityContext.Sysctls {
			if err := sysctls.check(s.Name, pod); err != nil {
				return &admissionRejection{Reason: reasonSysctlForbidden, Message: fmt.Sprintf("forbidden sysctl: %v", err)}
			}
		}
	}
	return admitPodOS(pod, runtime.GOOS)
}

// Rejection reasons of a pod meant for another operating system, as the kubelet gives them.
const (
	reasonPodOSSelectorMismatch = "PodOSSelectorNodeLabelDoesNotMatch"
	reasonPodOSNotSupported     = "PodOSNotSupported"
)

// admitPodOS refuses a pod meant for another operating system than the node's (nodeOS, which
// is also the node's kubernetes.io/os label), as the kubelet's predicate admission does: first
// by the pod's own kubernetes.io/os label, then by its spec.os.name.
func admitPodOS(pod *v1.Pod, nodeOS string) *admissionRejection {
	if os, ok := pod.Labels[v1.LabelOSStable]; ok && os != nodeOS {
		return &admissionRejection{Reason: reasonPodOSSelectorMismatch,
			Message: "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label"}
	}
	if pod.Spec.OS != nil && string(pod.Spec.OS.Name) != nodeOS {
		return &admissionRejection{Reason: reasonPodOSNotSupported,
			Message: "Failed to admit pod as the OS field doesn't match node OS"}
	}
	return nil
}

// rejectedStatus is the status of a pod the node refused: Failed with the reason, as the
// kubelet writes it; the conditions others set (PodScheduled) are kept. Like every status the
// kubelet's status manager writes, it has a start time (the pod's, else now) and the observed
// generation.
func rejectedStatus(pod *v1.Pod, r *admissionRejection, now time.Time) v1.PodStatus {
	st := v1.PodStatus{
		Phase:              v1.PodFailed,
		Reason:             r.Reason,
		Message:            "Pod was rejected: " + r.Message,
		QOSClass:           podQOS(pod),
		StartTime:          pod.Status.StartTime.DeepCopy(),
		ObservedGeneration: pod.Generation,
	}
	if st.StartTime == nil || st.StartTime.IsZero() {
		t := metav1.NewTime(now)
		st.StartTime = &t
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.PodScheduled {
			st.Conditions = append(st.Conditions, c)
		}
	}
	return st
}

// admissionRejection is the first of the node's admission checks that refuses the pod, in the
// order of the kubelet's admit handlers: node pressure (the eviction manager's), then the pod's
// own checks (sysctls, operating system).
func (p *Provider) admissionRejection(pod *v1.Pod) *admissionRejection {
	if r := p.admitUnderPressure(pod); r != nil {
		return r
	}
	return admitPod(pod, p.sysctls)
}

// rejectIfInadmissible refuses a pod that has not run yet on this node and fails the node's
// admission: it reports the rejection (event and Failed status) once and moves the pod to
// terminated (reason rejected), so that nothing of it ever runs. The caller then ends it on the
// one termination path.
func (p *Provider) rejectIfInadmissible(rec *podRecord, pod *v1.Pod, rt *podRuntime) bool {
	if rec.lifecycleNow().reason == terminationRejected {
		return true
	}
	if len(rt.Sandboxes) > 0 || len(rt.Containers) > 0 || isTerminalPhase(pod.Status.Phase) {
		return false
	}
	r := p.admissionRejection(pod)
	if r == nil {
		return false
	}
	p.podLog(pod).WithFields(map[string]any{"reason": r.Reason, "message": r.Message}).Warn("pod rejected")
	p.podEvent(pod, v1.EventTypeWarning, r.Reason, "%s", r.Message)
	if err := rec.transition(lifecycleChange{to: podTerminated, reason: terminationRejected}); err != nil {
		// A deletion or an eviction came first: that termination goes on instead.
		p.podLog(pod).WithError(err).Debug("not rejecting the pod")
		return true
	}
	p.setStatus(rec, pod, rejectedStatus(pod, r, time.Now()))
	return true
}
