package status

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// API container statuses, as generatePodStatus would produce them.

func stRunning(name string) v1.ContainerStatus {
	return v1.ContainerStatus{
		Name:    name,
		State:   v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(testT0)}},
		Ready:   true,
		Started: ptrTo(true),
	}
}

// stRunningNotStarted is a running container whose startup is not confirmed yet.
func stRunningNotStarted(name string) v1.ContainerStatus {
	s := stRunning(name)
	s.Started = ptrTo(false)
	s.Ready = false
	return s
}

func stTerminated(name string, code int32) v1.ContainerStatus {
	return v1.ContainerStatus{
		Name:    name,
		State:   v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: code}},
		Ready:   code == 0,
		Started: ptrTo(false),
	}
}

func stWaiting(name, reason string) v1.ContainerStatus {
	return v1.ContainerStatus{
		Name:    name,
		State:   v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: reason}},
		Started: ptrTo(false),
	}
}

// stWaitingAfter is a waiting container that terminated with code before (crash loop).
func stWaitingAfter(name, reason string, code int32) v1.ContainerStatus {
	s := stWaiting(name, reason)
	s.LastTerminationState = v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: code}}
	return s
}

func statuses(s ...v1.ContainerStatus) []v1.ContainerStatus { return s }

func TestPodPhase(t *testing.T) {
	a, b := ctr("a"), ctr("b")
	i1, i2 := ctr("i1"), ctr("i2")
	side := sidecarCtr("side")

	cases := []struct {
		name        string
		pod         *v1.Pod
		init        []v1.ContainerStatus
		regular     []v1.ContainerStatus
		terminal    bool
		initialized bool
		want        v1.PodPhase
		bug         string
	}{
		// --- pending ---
		{
			name: "no statuses at all: pending",
			pod:  testPod(withContainers(a)),
			want: v1.PodPending,
		},
		{
			name:    "waiting containers (ContainerCreating): pending",
			pod:     testPod(withContainers(a, b)),
			regular: statuses(stWaiting("a", "ContainerCreating"), stWaiting("b", "ContainerCreating")),
			want:    v1.PodPending,
		},
		{
			name:    "one running, one waiting: pending",
			pod:     testPod(withContainers(a, b)),
			regular: statuses(stRunning("a"), stWaiting("b", "ErrImagePull")),
			want:    v1.PodPending,
		},
		{
			name:    "one running, one without status: pending",
			pod:     testPod(withContainers(a, b)),
			regular: statuses(stRunning("a")),
			want:    v1.PodPending,
		},
		{
			name:    "waiting without a reason counts as waiting: pending",
			pod:     testPod(withContainers(a)),
			regular: statuses(stWaiting("a", "")),
			want:    v1.PodPending,
		},
		{
			name:    "a status with no state at all is unknown: pending",
			pod:     testPod(withContainers(a, b)),
			regular: statuses(stRunning("a"), v1.ContainerStatus{Name: "b"}),
			want:    v1.PodPending,
		},
		{
			name:     "terminal does not make a waiting pod finish",
			pod:      testPod(withContainers(a)),
			regular:  statuses(stWaiting("a", "ContainerCreating")),
			terminal: true,
			want:     v1.PodPending,
		},

		// --- running ---
		{
			name:    "all running: running",
			pod:     testPod(withContainers(a, b)),
			regular: statuses(stRunning("a"), stRunning("b")),
			want:    v1.PodRunning,
		},
		{
			name:    "one running, one succeeded (Never): running",
			pod:     testPod(withContainers(a, b), withRestart(v1.RestartPolicyNever)),
			regular: statuses(stRunning("a"), stTerminated("b", 0)),
			want:    v1.PodRunning,
		},
		{
			name:    "one running, one failed (Never): running",
			pod:     testPod(withContainers(a, b), withRestart(v1.RestartPolicyNever)),
			regular: statuses(stRunning("a"), stTerminated("b", 1)),
			want:    v1.PodRunning,
		},
		{
			name:     "terminal with a container still running: running",
			pod:      testPod(withContainers(a, b)),
			regular:  statuses(stRunning("a"), stTerminated("b", 0)),
			terminal: true,
			want:     v1.PodRunning,
		},

		// --- all stopped, by restart policy ---
		{
			name:    "all succeeded under Never: succeeded",
			pod:     testPod(withContainers(a, b), withRestart(v1.RestartPolicyNever)),
			regular: statuses(stTerminated("a", 0), stTerminated("b", 0)),
			want:    v1.PodSucceeded,
		},
		{
			name:    "all succeeded under OnFailure: succeeded",
			pod:     testPod(withContainers(a, b), withRestart(v1.RestartPolicyOnFailure)),
			regular: statuses(stTerminated("a", 0), stTerminated("b", 0)),
			want:    v1.PodSucceeded,
		},
		{
			name:    "all succeeded under Always: restarting, running",
			pod:     testPod(withContainers(a, b)),
			regular: statuses(stTerminated("a", 0), stTerminated("b", 0)),
			want:    v1.PodRunning,
		},
		{
			name:    "one failed under Never: failed",
			pod:     testPod(withContainers(a, b), withRestart(v1.RestartPolicyNever)),
			regular: statuses(stTerminated("a", 0), stTerminated("b", 2)),
			want:    v1.PodFailed,
		},
		{
			name:    "one failed under OnFailure: restarting, running",
			pod:     testPod(withContainers(a, b), withRestart(v1.RestartPolicyOnFailure)),
			regular: statuses(stTerminated("a", 0), stTerminated("b", 2)),
			want:    v1.PodRunning,
		},
		{
			name:    "failed under Always: restarting, running",
			pod:     testPod(withContainers(a)),
			regular: statuses(stTerminated("a", 137)),
			want:    v1.PodRunning,
		},
		{
			name:    "crash-looping under Always (waiting with a last termination): running",
			pod:     testPod(withContainers(a)),
			regular: statuses(stWaitingAfter("a", "CrashLoopBackOff", 1)),
			want:    v1.PodRunning,
		},
		{
			name:    "crash-looping under OnFailure: running",
			pod:     testPod(withContainers(a, b), withRestart(v1.RestartPolicyOnFailure)),
			regular: statuses(stWaitingAfter("a", "CrashLoopBackOff", 1), stTerminated("b", 0)),
			want:    v1.PodRunning,
		},
		{
			name:    "crash-looping next to a running container: running",
			pod:     testPod(withContainers(a, b)),
			regular: statuses(stWaitingAfter("a", "CrashLoopBackOff", 1), stRunning("b")),
			want:    v1.PodRunning,
		},
		{
			name:    "waiting after a failure under Never: failed",
			pod:     testPod(withContainers(a), withRestart(v1.RestartPolicyNever)),
			regular: statuses(stWaitingAfter("a", "RunContainerError", 1)),
			want:    v1.PodFailed,
		},

		// --- terminal ---
		{
			name:     "terminal Always pod, all succeeded: succeeded",
			pod:      testPod(withContainers(a, b)),
			regular:  statuses(stTerminated("a", 0), stTerminated("b", 0)),
			terminal: true,
			want:     v1.PodSucceeded,
		},
		{
			name:     "terminal Always pod, one failed: failed",
			pod:      testPod(withContainers(a, b)),
			regular:  statuses(stTerminated("a", 0), stTerminated("b", 143)),
			terminal: true,
			want:     v1.PodFailed,
		},
		{
			name:     "terminal OnFailure pod, one failed: failed",
			pod:      testPod(withContainers(a), withRestart(v1.RestartPolicyOnFailure)),
			regular:  statuses(stTerminated("a", 1)),
			terminal: true,
			want:     v1.PodFailed,
		},
		{
			name:     "terminal crash-looping pod: failed",
			pod:      testPod(withContainers(a)),
			regular:  statuses(stWaitingAfter("a", "CrashLoopBackOff", 1)),
			terminal: true,
			want:     v1.PodFailed,
		},

		// --- container-level restart policy and rules ---
		{
			name:    "container Always in a Never pod: exited, restarting, running",
			pod:     testPod(withContainers(withPolicy(a, v1.ContainerRestartPolicyAlways)), withRestart(v1.RestartPolicyNever)),
			regular: statuses(stTerminated("a", 0)),
			want:    v1.PodRunning,
		},
		{
			name:    "container Never in an Always pod: failed",
			pod:     testPod(withContainers(withPolicy(a, v1.ContainerRestartPolicyNever))),
			regular: statuses(stTerminated("a", 1)),
			want:    v1.PodFailed,
		},
		{
			name:    "container Never in an Always pod, all succeeded: succeeded",
			pod:     testPod(withContainers(withPolicy(a, v1.ContainerRestartPolicyNever), withPolicy(b, v1.ContainerRestartPolicyOnFailure))),
			regular: statuses(stTerminated("a", 0), stTerminated("b", 0)),
			want:    v1.PodSucceeded,
		},
		{
			name:    "one container done for good, another restartable: running",
			pod:     testPod(withContainers(withPolicy(a, v1.ContainerRestartPolicyNever), b)),
			regular: statuses(stTerminated("a", 1), stTerminated("b", 0)),
			want:    v1.PodRunning,
		},
		{
			name: "restart rule matching exit 42 in a Never pod: running",
			pod: testPod(withContainers(withRules(a, v1.ContainerRestartPolicyNever,
				restartRule(v1.ContainerRestartRuleActionRestart, v1.ContainerRestartRuleOnExitCodesOpIn, 42))), withRestart(v1.RestartPolicyNever)),
			regular: statuses(stTerminated("a", 42)),
			want:    v1.PodRunning,
		},
		{
			name: "restart rule not matching exit 1 in a Never pod: failed",
			pod: testPod(withContainers(withRules(a, v1.ContainerRestartPolicyNever,
				restartRule(v1.ContainerRestartRuleActionRestart, v1.ContainerRestartRuleOnExitCodesOpIn, 42))), withRestart(v1.RestartPolicyNever)),
			regular: statuses(stTerminated("a", 1)),
			want:    v1.PodFailed,
		},

		// --- init containers ---
		{
			name:    "init container without status: pending",
			pod:     testPod(withInit(i1), withContainers(a)),
			regular: statuses(stWaiting("a", "PodInitializing")),
			want:    v1.PodPending,
		},
		{
			name:    "init container waiting: pending",
			pod:     testPod(withInit(i1), withContainers(a)),
			init:    statuses(stWaiting("i1", "PodInitializing")),
			regular: statuses(stWaiting("a", "PodInitializing")),
			want:    v1.PodPending,
		},
		{
			name:    "init container running: pending",
			pod:     testPod(withInit(i1, i2), withContainers(a)),
			init:    statuses(stRunning("i1"), stWaiting("i2", "PodInitializing")),
			regular: statuses(stWaiting("a", "PodInitializing")),
			want:    v1.PodPending,
		},
		{
			name:    "init containers done, regular running: running",
			pod:     testPod(withInit(i1, i2), withContainers(a)),
			init:    statuses(stTerminated("i1", 0), stTerminated("i2", 0)),
			regular: statuses(stRunning("a")),
			want:    v1.PodRunning,
		},
		{
			name:    "init containers done, regular not started yet: pending",
			pod:     testPod(withInit(i1), withContainers(a)),
			init:    statuses(stTerminated("i1", 0)),
			regular: statuses(stWaiting("a", "PodInitializing")),
			want:    v1.PodPending,
		},
		{
			name:    "init container failed under Never: failed",
			pod:     testPod(withInit(i1, i2), withContainers(a), withRestart(v1.RestartPolicyNever)),
			init:    statuses(stTerminated("i1", 0), stTerminated("i2", 1)),
			regular: statuses(stWaiting("a", "PodInitializing")),
			want:    v1.PodFailed,
		},
		{
			name:    "init container failed under OnFailure: pending",
			pod:     testPod(withInit(i1), withContainers(a), withRestart(v1.RestartPolicyOnFailure)),
			init:    statuses(stTerminated("i1", 1)),
			regular: statuses(stWaiting("a", "PodInitializing")),
			want:    v1.PodPending,
		},
		{
			name:    "init container failed under Always: pending",
			pod:     testPod(withInit(i1), withContainers(a)),
			init:    statuses(stTerminated("i1", 1)),
			regular: statuses(stWaiting("a", "PodInitializing")),
			want:    v1.PodPending,
		},
		{
			name:    "init container crash-looping under OnFailure: pending",
			pod:     testPod(withInit(i1), withContainers(a), withRestart(v1.RestartPolicyOnFailure)),
			init:    statuses(stWaitingAfter("i1", "CrashLoopBackOff", 1)),
			regular: statuses(stWaiting("a", "PodInitializing")),
			want:    v1.PodPending,
		},
		{
			name:    "init container waiting after a failure under Never: failed",
			pod:     testPod(withInit(i1), withContainers(a), withRestart(v1.RestartPolicyNever)),
			init:    statuses(stWaitingAfter("i1", "RunContainerError", 1)),
			regular: statuses(stWaiting("a", "PodInitializing")),
			want:    v1.PodFailed,
		},
		{
			name:    "init container with its own OnFailure policy failed in a Never pod: pending",
			pod:     testPod(withInit(withPolicy(i1, v1.ContainerRestartPolicyOnFailure)), withContainers(a), withRestart(v1.RestartPolicyNever)),
			init:    statuses(stTerminated("i1", 1)),
			regular: statuses(stWaiting("a", "PodInitializing")),
			want:    v1.PodPending,
		},
		{
			name:    "init container with its own Never policy failed in an Always pod: failed",
			pod:     testPod(withInit(withPolicy(i1, v1.ContainerRestartPolicyNever)), withContainers(a)),
			init:    statuses(stTerminated("i1", 1)),
			regular: statuses(stWaiting("a", "PodInitializing")),
			want:    v1.PodFailed,
		},
		{
			name:     "failed init container under Never beats running regular containers",
			pod:      testPod(withInit(i1), withContainers(a), withRestart(v1.RestartPolicyNever)),
			init:     statuses(stTerminated("i1", 1)),
			regular:  statuses(stRunning("a")),
			terminal: false,
			want:     v1.PodFailed,
		},

		// --- sidecars (restartable init containers) ---
		{
			name:    "sidecar started, regular running: running",
			pod:     testPod(withInit(side), withContainers(a)),
			init:    statuses(stRunning("side")),
			regular: statuses(stRunning("a")),
			want:    v1.PodRunning,
		},
		{
			name:    "sidecar running but not started, not initialized: pending",
			pod:     testPod(withInit(side), withContainers(a)),
			init:    statuses(stRunningNotStarted("side")),
			regular: statuses(stRunning("a")),
			want:    v1.PodPending,
		},
		{
			name:        "sidecar running but not started, pod initialized: running",
			pod:         testPod(withInit(side), withContainers(a)),
			init:        statuses(stRunningNotStarted("side")),
			regular:     statuses(stRunning("a")),
			initialized: true,
			want:        v1.PodRunning,
		},
		{
			name:    "sidecar without status: pending",
			pod:     testPod(withInit(side), withContainers(a)),
			regular: statuses(stRunning("a")),
			want:    v1.PodPending,
		},
		{
			name:        "sidecar without status, pod initialized: still pending (unknown)",
			pod:         testPod(withInit(side), withContainers(a)),
			regular:     statuses(stRunning("a")),
			initialized: true,
			want:        v1.PodPending,
		},
		{
			name:        "sidecar waiting for its first start: pending",
			pod:         testPod(withInit(side), withContainers(a)),
			init:        statuses(stWaiting("side", "PodInitializing")),
			regular:     statuses(stRunning("a")),
			initialized: true,
			want:        v1.PodPending,
		},
		{
			name:        "sidecar restarting (waiting after a termination), pod initialized: running",
			pod:         testPod(withInit(side), withContainers(a)),
			init:        statuses(stWaitingAfter("side", "CrashLoopBackOff", 1)),
			regular:     statuses(stRunning("a")),
			initialized: true,
			want:        v1.PodRunning,
		},
		{
			name:        "sidecar terminated is ignored: regular running, running",
			pod:         testPod(withInit(side), withContainers(a)),
			init:        statuses(stTerminated("side", 1)),
			regular:     statuses(stRunning("a")),
			initialized: true,
			want:        v1.PodRunning,
		},
		{
			name:        "sidecar terminated, regular containers succeeded (Never): succeeded",
			pod:         testPod(withInit(side), withContainers(a), withRestart(v1.RestartPolicyNever)),
			init:        statuses(stTerminated("side", 137)),
			regular:     statuses(stTerminated("a", 0)),
			initialized: true,
			want:        v1.PodSucceeded,
		},
		{
			name:        "sidecar still running, regular containers succeeded (Never): running",
			pod:         testPod(withInit(side), withContainers(a), withRestart(v1.RestartPolicyNever)),
			init:        statuses(stRunning("side")),
			regular:     statuses(stTerminated("a", 0)),
			initialized: true,
			want:        v1.PodRunning,
		},
		{
			name:        "sidecar failure never fails the pod (Never)",
			pod:         testPod(withInit(side, i1), withContainers(a), withRestart(v1.RestartPolicyNever)),
			init:        statuses(stTerminated("side", 1), stTerminated("i1", 0)),
			regular:     statuses(stRunning("a")),
			initialized: true,
			want:        v1.PodRunning,
		},
		{
			name:    "sidecar running, regular init container still running: pending",
			pod:     testPod(withInit(side, i1), withContainers(a)),
			init:    statuses(stRunning("side"), stRunning("i1")),
			regular: statuses(stWaiting("a", "PodInitializing")),
			want:    v1.PodPending,
		},

		// --- kubelet behaviour not reproduced ---
		{
			name:     "terminal pod, container waiting after a successful run: failed (kubelet does not count it as succeeded)",
			pod:      testPod(withContainers(a)),
			regular:  statuses(stWaitingAfter("a", "ContainerCreating", 0)),
			terminal: true,
			want:     v1.PodFailed,
			bug:      "lastExit treats Waiting+LastTerminationState(exit 0) as succeeded; getPhase counts it as stopped but not succeeded",
		},
		{
			name:    "Never container waiting after a successful run: failed",
			pod:     testPod(withContainers(withPolicy(a, v1.ContainerRestartPolicyNever))),
			regular: statuses(stWaitingAfter("a", "RunContainerError", 0)),
			want:    v1.PodFailed,
			bug:     "lastExit treats Waiting+LastTerminationState(exit 0) as succeeded; getPhase counts it as stopped but not succeeded",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := PodPhase(tc.pod, tc.init, tc.regular, tc.terminal, tc.initialized)
			diff := ""
			if got != tc.want {
				diff = "- " + string(tc.want) + "\n+ " + string(got)
			}
			if tc.bug != "" {
				knownBug(t, tc.bug, diff)
				return
			}
			if got != tc.want {
				t.Errorf("PodPhase = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestLastExit(t *testing.T) {
	cases := []struct {
		name     string
		s        v1.ContainerStatus
		wantCode int32
		wantOK   bool
	}{
		{"terminated", stTerminated("a", 3), 3, true},
		{"waiting after termination", stWaitingAfter("a", "CrashLoopBackOff", 2), 2, true},
		{"waiting, never ran", stWaiting("a", "ContainerCreating"), 0, false},
		{"running", stRunning("a"), 0, false},
		{"running with a last termination", func() v1.ContainerStatus {
			s := stRunning("a")
			s.LastTerminationState = v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 1}}
			return s
		}(), 0, false},
		{"empty", v1.ContainerStatus{}, 0, false},
	}
	for _, tc := range cases {
		code, ok := lastExit(tc.s)
		if code != tc.wantCode || ok != tc.wantOK {
			t.Errorf("%s: lastExit = (%d, %v), want (%d, %v)", tc.name, code, ok, tc.wantCode, tc.wantOK)
		}
	}
}

func TestFindStatus(t *testing.T) {
	list := statuses(stRunning("a"), stTerminated("b", 1))
	if s, ok := FindStatus(list, "b"); !ok || s.Name != "b" || s.State.Terminated == nil {
		t.Errorf("FindStatus(b) = %+v, %v", s, ok)
	}
	if _, ok := FindStatus(list, "c"); ok {
		t.Errorf("FindStatus(c) found a status")
	}
	if _, ok := FindStatus(nil, "a"); ok {
		t.Errorf("FindStatus on nil found a status")
	}
}
