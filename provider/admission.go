package provider

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/node/util/sysctl"

	"github.com/vk-cri/vk-cri/provider/translate"
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

// admitSysctls is the kubelet's sysctl admit handler: the first of the pod's sysctls the node
// does not allow refuses it; nil admits it.
func admitSysctls(pod *v1.Pod, sysctls sysctlPolicy) *admissionRejection {
	if pod.Spec.SecurityContext != nil {
		for _, s := range pod.Spec.SecurityContext.Sysctls {
			if err := sysctls.check(s.Name, pod); err != nil {
				return &admissionRejection{Reason: reasonSysctlForbidden, Message: fmt.Sprintf("forbidden sysctl: %v", err)}
			}
		}
	}
	return nil
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
		QOSClass:           translate.PodQOS(pod),
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

// admissionRetry is how soon a pod whose admission had to wait is looked at again.
const admissionRetry = time.Second

// admissionRejection is the first of the node's admission checks that refuses the pod, in the
// order of the kubelet's admit handlers (pkg/kubelet/kubelet.go NewMainKubelet): node pressure
// (the eviction manager's), the pod's sysctls, then the predicates against the node and the
// other admitted pods (admitPredicates). others are those pods, as the kubelet's allocation
// manager gives them: active (not terminated, or terminating) and admitted, at their allocated
// resources.
func (p *Provider) admissionRejection(ctx context.Context, pod *v1.Pod, others []*v1.Pod) *admissionRejection {
	if r := p.admitUnderPressure(pod); r != nil {
		return r
	}
	if r := admitSysctls(pod, p.sysctls); r != nil {
		return r
	}
	node, err := p.admissionNode(ctx, true)
	if err != nil {
		p.podLog(pod).WithError(err).Warn("admission: cannot get the node")
		node = nil
	}
	fresh := func() (*v1.Node, error) { return p.admissionNode(ctx, false) }
	return admitPredicates(pod, runtime.GOOS, node, others, fresh)
}

// rejectIfInadmissible admits a pod that has not run yet on this node, or refuses it. Like the
// kubelet's allocation manager, it decides one pod at a time (admitMu) and records an admitted
// pod's allocation at once, so that the next pod is admitted next to it; a pod admitted once is
// not admitted again. Pods are decided in the kubelet's order (admissionOrder): one waits while
// a pod that came before it is undecided, so that of two pods after the same host port the
// first created runs, on every run. A refused pod gets its rejection reported (event and Failed
// status) once and moves to terminated (reason rejected), so that nothing of it ever runs; the
// caller then ends it on the one termination path. It reports whether this sync stops here, and
// when to look again if the decision had to wait (an earlier pod is undecided, or some pod found
// in the runtime at start-up, whose resources count, is not known from the API yet).
func (p *Provider) rejectIfInadmissible(ctx context.Context, rec *podRecord, pod *v1.Pod, rt *podRuntime) (stop bool, retry time.Duration) {
	if rec.lifecycleNow().reason == terminationRejected {
		return true, 0
	}
	if len(rt.Sandboxes) > 0 || len(rt.Containers) > 0 || isTerminalPhase(pod.Status.Phase) {
		return false, 0
	}
	p.admitMu.Lock()
	defer p.admitMu.Unlock()
	if _, admitted := p.alloc.allocated(pod.UID); admitted {
		return false, 0
	}
	if earlier := p.undecidedPods(rec); len(earlier) > 0 {
		// The one admitted first is woken by the decision; this one's turn comes after.
		return true, admissionRetry
	}
	// Whatever the decision, the pods that came after this one may now be decided.
	defer p.wakeUndecided(rec)
	others, complete := p.otherAllocatedPods(pod.UID)
	if !complete {
		p.podLog(pod).Debug("admission waits until every pod found in the runtime is known from the API")
		return true, admissionRetry
	}
	r := p.admissionRejection(ctx, pod, others)
	if r == nil {
		if err := p.alloc.setAllocated(pod.UID, specAllocation(pod)); err != nil {
			p.podLog(pod).WithError(err).Warn("recording the pod's allocated resources")
		}
		return false, 0
	}
	p.podLog(pod).WithFields(map[string]any{"reason": r.Reason, "message": r.Message, "otherPods": len(others)}).Warn("pod rejected")
	p.podEvent(pod, v1.EventTypeWarning, r.Reason, "%s", r.Message)
	if err := rec.transition(lifecycleChange{to: podTerminated, reason: terminationRejected}); err != nil {
		// A deletion or an eviction came first: that termination goes on instead.
		p.podLog(pod).WithError(err).Debug("not rejecting the pod")
		return true, 0
	}
	p.setStatus(rec, pod, rejectedStatus(pod, r, time.Now()))
	return true, 0
}

// admissionKey is where a pod stands in the admission order.
type admissionKey struct {
	created   time.Time // the pod's creation timestamp
	firstSeen time.Time // when vk-cri got it from the API (zero: found in the runtime first)
	uid       string
}

// admissionOrder tells whether a is admitted before b: by creation time, as the kubelet sorts
// the pods it is given together (HandlePodAdditions, PodsByCreationTime), then in the order the
// API delivered them (the order the kubelet's stable sort keeps for pods created within the same
// second), then by UID so that the order is total.
func admissionOrder(a, b admissionKey) bool {
	if !a.created.Equal(b.created) {
		return a.created.Before(b.created)
	}
	if !a.firstSeen.Equal(b.firstSeen) {
		return a.firstSeen.Before(b.firstSeen)
	}
	return a.uid < b.uid
}

func (r *podRecord) admissionKey() admissionKey {
	return admissionKey{created: r.pod.CreationTimestamp.Time, firstSeen: r.firstSeen, uid: string(r.uid)}
}

// undecidedLocked tells whether the record's pod waits for admission: given by the API, still
// to be synced (not refused, ended or being deleted) and not admitted (it holds no allocation).
// r.mu is held.
func (p *Provider) undecidedLocked(r *podRecord) bool {
	if r.pod == nil || r.lifecycle.state != podSyncing || r.lifecycle.deletion != nil {
		return false
	}
	_, admitted := p.alloc.allocated(r.uid)
	return !admitted
}

// undecidedPods are the undecided pods admitted before rec's (see admissionOrder).
func (p *Provider) undecidedPods(rec *podRecord) []*podRecord {
	rec.mu.Lock()
	key := rec.admissionKey()
	rec.mu.Unlock()
	var out []*podRecord
	for _, r := range p.pods.list() {
		if r == rec {
			continue
		}
		r.mu.Lock()
		if p.undecidedLocked(r) && admissionOrder(r.admissionKey(), key) {
			out = append(out, r)
		}
		r.mu.Unlock()
	}
	return out
}

// wakeUndecided asks the workers of the undecided pods other than rec's for a sync: one of them
// is next.
func (p *Provider) wakeUndecided(rec *podRecord) {
	for _, r := range p.pods.list() {
		if r == rec {
			continue
		}
		r.mu.Lock()
		undecided := p.undecidedLocked(r)
		r.mu.Unlock()
		if undecided {
			r.poke()
		}
	}
}
