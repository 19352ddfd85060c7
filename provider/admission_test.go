package provider

import (
	"context"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestAdmitPodSysctls(t *testing.T) {
	policy, err := newSysctlPolicy([]string{"kernel.msgmax", "net.core.*"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		sysctls []string
		mod     func(*v1.Pod)
		want    string // rejection message, "" admits
	}{
		{name: "none"},
		{name: "safe", sysctls: []string{"net.ipv4.ip_unprivileged_port_start", "kernel.shm_rmid_forced"}},
		{name: "safe, slash-separated", sysctls: []string{"net/ipv4/ip_local_port_range"}},
		{name: "allowed unsafe", sysctls: []string{"kernel.msgmax"}},
		{name: "allowed by prefix", sysctls: []string{"net.core.somaxconn"}},
		{name: "not allowed", sysctls: []string{"kernel.msgmnb"}, want: `forbidden sysctl: "kernel.msgmnb" not allowlisted`},
		{name: "first forbidden one named", sysctls: []string{"net.ipv4.tcp_syncookies", "vm.swappiness"}, want: `forbidden sysctl: "vm.swappiness" not allowlisted`},
		{name: "net sysctl with host network", sysctls: []string{"net.ipv4.tcp_syncookies"}, mod: func(p *v1.Pod) { p.Spec.HostNetwork = true },
			want: `forbidden sysctl: "net.ipv4.tcp_syncookies" not allowed with host Net enabled`},
		{name: "ipc sysctl with host IPC", sysctls: []string{"kernel.msgmax"}, mod: func(p *v1.Pod) { p.Spec.HostIPC = true },
			want: `forbidden sysctl: "kernel.msgmax" not allowed with host IPC enabled`},
	}
	for _, tc := range cases {
		pod := testPod()
		if tc.sysctls != nil {
			pod.Spec.SecurityContext = &v1.PodSecurityContext{}
			for _, s := range tc.sysctls {
				pod.Spec.SecurityContext.Sysctls = append(pod.Spec.SecurityContext.Sysctls, v1.Sysctl{Name: s, Value: "1"})
			}
		}
		if tc.mod != nil {
			tc.mod(pod)
		}
		r := admitSysctls(pod, policy)
		switch {
		case tc.want == "" && r != nil:
			t.Errorf("%s: rejected: %+v", tc.name, r)
		case tc.want != "" && (r == nil || r.Reason != "SysctlForbidden" || r.Message != tc.want):
			t.Errorf("%s: %+v, want SysctlForbidden %q", tc.name, r, tc.want)
		}
	}
}

func TestSysctlPatterns(t *testing.T) {
	for _, ok := range []string{"kernel.msgmax", "net.*", "net.ipv4.route.*", "fs.mqueue.msg_max", "kernel.shm*"} {
		if err := ValidateSysctlPatterns([]string{ok}); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"vm.swappiness", "kernel.*", "", "net.*.x"} {
		if err := ValidateSysctlPatterns([]string{bad}); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}

func TestRejectedStatus(t *testing.T) {
	pod := testPod()
	pod.Status.QOSClass = v1.PodQOSBestEffort
	pod.Status.Conditions = []v1.PodCondition{
		{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(testT0)},
		{Type: v1.PodReady, Status: v1.ConditionFalse},
	}
	st := rejectedStatus(pod, &admissionRejection{Reason: "SysctlForbidden", Message: "forbidden sysctl: x"}, testT0)
	if st.Phase != v1.PodFailed || st.Reason != "SysctlForbidden" || st.Message != "Pod was rejected: forbidden sysctl: x" || st.QOSClass != v1.PodQOSBestEffort {
		t.Errorf("status %+v", st)
	}
	if st.StartTime == nil || !st.StartTime.Time.Equal(testT0) || st.ObservedGeneration != pod.Generation {
		t.Errorf("startTime %v, observedGeneration %d: want now and the pod's generation %d", st.StartTime, st.ObservedGeneration, pod.Generation)
	}
	started := metav1.NewTime(testT0.Add(-time.Minute))
	pod.Status.StartTime = &started
	if st := rejectedStatus(pod, &admissionRejection{Reason: "r"}, testT0); !st.StartTime.Equal(&started) {
		t.Errorf("startTime %v, want the pod's %v", st.StartTime, started)
	}
	if len(st.Conditions) != 1 || st.Conditions[0].Type != v1.PodScheduled {
		t.Errorf("conditions %v, want PodScheduled only", st.Conditions)
	}
}

func TestAdmitPodOS(t *testing.T) {
	cases := []struct {
		name       string
		label      string // the pod's kubernetes.io/os label, "" for none
		os         v1.OSName
		wantReason string
		wantMsg    string
	}{
		{name: "neither label nor spec.os"},
		{name: "spec.os linux", os: v1.Linux},
		{name: "label linux", label: "linux"},
		{name: "spec.os windows", os: v1.Windows, wantReason: "PodOSNotSupported",
			wantMsg: "Failed to admit pod as the OS field doesn't match node OS"},
		{name: "label windows", label: "windows", wantReason: "PodOSSelectorNodeLabelDoesNotMatch",
			wantMsg: "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label"},
		{name: "label checked before spec.os", label: "windows", os: v1.Windows, wantReason: "PodOSSelectorNodeLabelDoesNotMatch",
			wantMsg: "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label"},
		{name: "label linux, spec.os windows", label: "linux", os: v1.Windows, wantReason: "PodOSNotSupported",
			wantMsg: "Failed to admit pod as the OS field doesn't match node OS"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := testPod()
			if tc.label != "" {
				pod.Labels = map[string]string{v1.LabelOSStable: tc.label}
			}
			if tc.os != "" {
				pod.Spec.OS = &v1.PodOS{Name: tc.os}
			}
			r := admitPodOS(pod, "linux")
			switch {
			case tc.wantReason == "" && r != nil:
				t.Errorf("rejected: %+v", r)
			case tc.wantReason != "" && (r == nil || r.Reason != tc.wantReason || r.Message != tc.wantMsg):
				t.Errorf("got %+v, want %s %q", r, tc.wantReason, tc.wantMsg)
			}
			// The predicate admission applies it first.
			if r2 := admitPredicates(pod, "linux", admissionTestNode(), nil, nil); (r2 == nil) != (r == nil) || r2 != nil && r2.Reason != r.Reason {
				t.Errorf("admitPredicates = %+v, admitPodOS = %+v", r2, r)
			}
		})
	}
}

// Node pressure refuses a pod before its own checks, as the kubelet's eviction admit handler
// comes before its sysctl and predicate handlers.
func TestAdmissionOrder(t *testing.T) {
	policy, err := newSysctlPolicy(nil)
	if err != nil {
		t.Fatal(err)
	}
	pod := testPod(withContainers(ctr("a")))
	pod.Spec.OS = &v1.PodOS{Name: v1.Windows}
	pod.Spec.SecurityContext = &v1.PodSecurityContext{Sysctls: []v1.Sysctl{{Name: "kernel.msgmax", Value: "1"}}}
	underPressure := func(*v1.Pod, bool) (string, string) { return "Evicted", "The node had condition: [MemoryPressure]. " }
	for _, tc := range []struct {
		name     string
		pressure func(*v1.Pod, bool) (string, string)
		want     string
	}{
		{"pressure first", underPressure, "Evicted"},
		{"then sysctls, before the OS", nil, reasonSysctlForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Provider{cfg: Config{PressureAdmission: tc.pressure}, sysctls: policy, log: logrus.NewEntry(logrus.New())}
			p.setDescribedNode(admissionTestNode())
			if r := p.admissionRejection(context.Background(), pod, nil); r == nil || r.Reason != tc.want {
				t.Errorf("rejection %+v, want reason %s", r, tc.want)
			}
		})
	}
}
