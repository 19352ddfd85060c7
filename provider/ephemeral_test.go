package provider

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-cri/vk-cri/provider/podspec"
	"github.com/vk-cri/vk-cri/provider/translate"
)

// ephemeral is an ephemeral container named name (image "<name>:1.0") targeting target ("" for
// none), as kubectl debug adds it.
func ephemeral(name, target string) v1.EphemeralContainer {
	return v1.EphemeralContainer{
		EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: name, Image: name + ":1.0", Stdin: true, TTY: true},
		TargetContainerName:      target,
	}
}

func withEphemeral(ecs ...v1.EphemeralContainer) podOpt {
	return func(p *v1.Pod) { p.Spec.EphemeralContainers = ecs }
}

// asCtr is the ephemeral container as runtime fixtures take it.
func asCtr(ec v1.EphemeralContainer) v1.Container { return *ephemeralAsContainer(&ec) }

// The kubelet's rules for ephemeral containers (computePodActions' EphemeralContainersToStart):
// each is started once the pod has a live sandbox, whether initialised or not, and never again.
func TestComputePodActionsEphemeral(t *testing.T) {
	a := ctr("a")
	i1, side := ctr("i1"), sidecarCtr("side")
	dbg, dbg2 := ephemeral("debugger", "a"), ephemeral("debugger2", "")
	s1, s1dead, s2 := sandbox("s1", 0, true), sandbox("s1", 0, false), sandbox("s2", 1, true)

	cases := []struct {
		name string
		pod  *v1.Pod
		rt   *podRuntime
		want podActions
	}{
		{
			name: "added to a running pod: started",
			pod:  testPod(withContainers(a), withEphemeral(dbg)),
			rt:   rtOf(sbs(s1), running(a, "c-a", "s1")),
			want: podActions{SandboxID: "s1", InitToStart: -1, EphemeralToStart: []int{0}},
		},
		{
			name: "running: left alone",
			pod:  testPod(withContainers(a), withEphemeral(dbg)),
			rt:   rtOf(sbs(s1), running(a, "c-a", "s1"), running(asCtr(dbg), "c-dbg", "s1")),
			want: podActions{SandboxID: "s1", InitToStart: -1},
		},
		{
			name: "exited 0 under restartPolicy Always: never restarted",
			pod:  testPod(withContainers(a), withEphemeral(dbg)),
			rt:   rtOf(sbs(s1), running(a, "c-a", "s1"), exited(asCtr(dbg), "c-dbg", "s1", 0)),
			want: podActions{SandboxID: "s1", InitToStart: -1},
		},
		{
			name: "exited 1 under restartPolicy Always: never restarted, no back-off",
			pod:  testPod(withContainers(a), withEphemeral(dbg)),
			rt:   rtOf(sbs(s1), running(a, "c-a", "s1"), exited(asCtr(dbg), "c-dbg", "s1", 1)),
			want: podActions{SandboxID: "s1", InitToStart: -1},
		},
		{
			name: "created but never started: not replaced",
			pod:  testPod(withContainers(a), withEphemeral(dbg)),
			rt:   rtOf(sbs(s1), running(a, "c-a", "s1"), created(asCtr(dbg), "c-dbg", "s1")),
			want: podActions{SandboxID: "s1", InitToStart: -1},
		},
		{
			name: "two added, one ran: only the new one starts",
			pod:  testPod(withContainers(a), withEphemeral(dbg, dbg2)),
			rt:   rtOf(sbs(s1), running(a, "c-a", "s1"), exited(asCtr(dbg), "c-dbg", "s1", 0)),
			want: podActions{SandboxID: "s1", InitToStart: -1, EphemeralToStart: []int{1}},
		},
		{
			name: "pod still initialising: started beside the running init container",
			pod:  testPod(withInit(i1), withContainers(a), withEphemeral(dbg2)),
			rt:   rtOf(sbs(s1), running(i1, "c-i1", "s1")),
			want: podActions{SandboxID: "s1", InitToStart: -1, EphemeralToStart: []int{0}},
		},
		{
			name: "pod still initialising: started with the next init container",
			pod:  testPod(withInit(i1), withContainers(a), withEphemeral(dbg2)),
			rt:   rtOf(sbs(s1)),
			want: podActions{SandboxID: "s1", InitToStart: 0, EphemeralToStart: []int{0}},
		},
		{
			name: "with a restarting container: both start",
			pod:  testPod(withContainers(a), withEphemeral(dbg)),
			rt:   rtOf(sbs(s1), exited(a, "c-a", "s1", 1)),
			want: podActions{SandboxID: "s1", InitToStart: -1, ContainersToStart: []int{0}, EphemeralToStart: []int{0}},
		},
		{
			name: "no sandbox yet: not in the sync that creates it",
			pod:  testPod(withContainers(a), withEphemeral(dbg)),
			rt:   &podRuntime{},
			want: podActions{CreateSandbox: true, InitToStart: -1, ContainersToStart: []int{0}},
		},
		{
			name: "sandbox died: the pod is killed, the ephemeral container is not started",
			pod:  testPod(withContainers(a), withEphemeral(dbg)),
			rt:   rtOf(sbs(s1dead), exited(a, "c-a", "s1", 137)),
			want: podActions{KillPod: true, CreateSandbox: true, SandboxAttempt: 1, InitToStart: -1, ContainersToStart: []int{0}},
		},
		{
			name: "ran in an older sandbox: not started again in the new one",
			pod:  testPod(withContainers(a), withEphemeral(dbg)),
			rt:   rtOf(sbs(s2, s1dead), running(a, "c-a2", "s2", restarts(1)), exited(asCtr(dbg), "c-dbg", "s1", 137)),
			want: podActions{SandboxID: "s2", InitToStart: -1},
		},
		{
			name: "regular containers done, a sidecar runs: the pod is killed, nothing starts",
			pod:  testPod(withInit(side), withContainers(a), withRestart(v1.RestartPolicyNever), withEphemeral(dbg)),
			rt:   rtOf(sbs(s1), running(side, "c-side", "s1"), exited(a, "c-a", "s1", 0)),
			want: podActions{KillPod: true, SandboxID: "s1", InitToStart: -1},
		},
		{
			name: "a running ephemeral container keeps nothing alive: a done Never pod is killed with it",
			pod:  testPod(withContainers(a), withRestart(v1.RestartPolicyNever), withEphemeral(dbg)),
			rt:   rtOf(sbs(s1), exited(a, "c-a", "s1", 0), running(asCtr(dbg), "c-dbg", "s1")),
			want: podActions{KillPod: true, SandboxID: "s1", InitToStart: -1},
		},
		{
			name: "a done OnFailure pod with an exited ephemeral container: nothing to kill",
			pod:  testPod(withContainers(a), withRestart(v1.RestartPolicyOnFailure), withEphemeral(dbg)),
			rt:   rtOf(sbs(s1), exited(a, "c-a", "s1", 0), exited(asCtr(dbg), "c-dbg", "s1", 0)),
			want: podActions{SandboxID: "s1", InitToStart: -1},
		},
		{
			name: "a regular container restarting under Always: the running ephemeral container stays",
			pod:  testPod(withContainers(a), withEphemeral(dbg)),
			rt:   rtOf(sbs(s1), exited(a, "c-a", "s1", 0), running(asCtr(dbg), "c-dbg", "s1")),
			want: podActions{SandboxID: "s1", InitToStart: -1, ContainersToStart: []int{0}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := computePodActions(tc.pod, tc.rt, nil, nil)
			if diff := cmp.Diff(tc.want, got, actionsCmpOpts...); diff != "" {
				t.Errorf("computePodActions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestChangesRuntimeEphemeral(t *testing.T) {
	if !(podActions{InitToStart: -1, EphemeralToStart: []int{0}}).changesRuntime() {
		t.Error("an ephemeral container to start changes the runtime")
	}
}

func TestEphemeralTargetID(t *testing.T) {
	a := ctr("a")
	cases := []struct {
		name    string
		pod     *v1.Pod
		rt      *podRuntime
		ctr     string
		want    string
		wantErr string
	}{
		{"regular container: no target", testPod(withContainers(a), withEphemeral(ephemeral("dbg", "a"))), rtOf(sbs(sandbox("s1", 0, true)), running(a, "c-a", "s1")), "a", "", ""},
		{"ephemeral without target", testPod(withContainers(a), withEphemeral(ephemeral("dbg", ""))), rtOf(sbs(sandbox("s1", 0, true)), running(a, "c-a", "s1")), "dbg", "", ""},
		{"target running", testPod(withContainers(a), withEphemeral(ephemeral("dbg", "a"))), rtOf(sbs(sandbox("s1", 0, true)), running(a, "c-a", "s1")), "dbg", "c-a", ""},
		{
			"target restarted: its newest instance",
			testPod(withContainers(a), withEphemeral(ephemeral("dbg", "a"))),
			rtOf(sbs(sandbox("s1", 0, true)), exited(a, "c-a0", "s1", 1), running(a, "c-a1", "s1", restarts(1))),
			"dbg", "c-a1", "",
		},
		{
			"target exited: still its instance (the runtime refuses it, as with the kubelet)",
			testPod(withContainers(a), withEphemeral(ephemeral("dbg", "a"))),
			rtOf(sbs(sandbox("s1", 0, true)), exited(a, "c-a", "s1", 0)),
			"dbg", "c-a", "",
		},
		{
			"target never created",
			testPod(withContainers(a), withEphemeral(ephemeral("dbg", "a"))),
			rtOf(sbs(sandbox("s1", 0, true))),
			"dbg", "", "unable to find target container a",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ephemeralTargetID(tc.pod, tc.ctr, tc.rt)
			if tc.wantErr != "" {
				var nf errTargetNotFound
				if err == nil || err.Error() != tc.wantErr || !errors.As(err, &nf) {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ephemeralTargetID = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestTargetPIDNamespace(t *testing.T) {
	cases := []struct {
		name     string
		pid      runtimeapi.NamespaceMode
		target   string
		want     runtimeapi.NamespaceMode
		wantTgID string
	}{
		{"private PID namespace joins the target's", runtimeapi.NamespaceMode_CONTAINER, "c-a", runtimeapi.NamespaceMode_TARGET, "c-a"},
		{"no target: unchanged", runtimeapi.NamespaceMode_CONTAINER, "", runtimeapi.NamespaceMode_CONTAINER, ""},
		{"shareProcessNamespace: the pod's", runtimeapi.NamespaceMode_POD, "c-a", runtimeapi.NamespaceMode_POD, ""},
		{"hostPID: the node's", runtimeapi.NamespaceMode_NODE, "c-a", runtimeapi.NamespaceMode_NODE, ""},
	}
	for _, tc := range cases {
		sc := &runtimeapi.LinuxContainerSecurityContext{NamespaceOptions: &runtimeapi.NamespaceOption{Pid: tc.pid}}
		translate.TargetPIDNamespace(sc, tc.target)
		if sc.NamespaceOptions.Pid != tc.want || sc.NamespaceOptions.TargetId != tc.wantTgID {
			t.Errorf("%s: pid %v target %q, want %v %q", tc.name, sc.NamespaceOptions.Pid, sc.NamespaceOptions.TargetId, tc.want, tc.wantTgID)
		}
	}
}

// ephemeralContainerStatuses as the kubelet converts them: like regular containers' but never
// ready and without started; sorted by name; they leave the pod's phase and conditions alone.
func TestGeneratePodStatusEphemeral(t *testing.T) {
	a, i1 := ctr("a"), ctr("i1")
	dbg, dbg2 := ephemeral("debugger", "a"), ephemeral("aaa-debugger", "")
	s1 := sandbox("s1", 0, true)
	ra := running(a, "c-a", "s1")
	rdbg := running(asCtr(dbg), "c-dbg", "s1")
	edbg := exited(asCtr(dbg), "c-dbg", "s1", 3)

	waiting := func(name, image, reason, msg string) v1.ContainerStatus {
		return v1.ContainerStatus{Name: name, Image: image, State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: reason, Message: msg}}}
	}
	cases := []struct {
		name    string
		pod     *v1.Pod
		rt      *podRuntime
		reasons map[string]waitingReason
		want    []v1.ContainerStatus
	}{
		{
			name: "not started yet: ContainerCreating",
			pod:  testPod(withContainers(a), withEphemeral(dbg)),
			rt:   rtOf(sbs(s1), ra),
			want: []v1.ContainerStatus{waiting("debugger", "debugger:1.0", "ContainerCreating", "")},
		},
		{
			name: "not started yet in a pod with init containers: PodInitializing",
			pod:  testPod(withInit(i1), withContainers(a), withEphemeral(dbg)),
			rt:   rtOf(sbs(s1), exited(i1, "c-i1", "s1", 0), ra),
			want: []v1.ContainerStatus{waiting("debugger", "debugger:1.0", "PodInitializing", "")},
		},
		{
			name:    "start failed: the start's reason",
			pod:     testPod(withContainers(a), withEphemeral(dbg)),
			rt:      rtOf(sbs(s1), ra),
			reasons: map[string]waitingReason{"debugger": {Reason: "ErrImagePull", Message: "failed to pull image"}},
			want:    []v1.ContainerStatus{waiting("debugger", "debugger:1.0", "ErrImagePull", "failed to pull image")},
		},
		{
			name: "running: not ready, started not set",
			pod:  testPod(withContainers(a), withEphemeral(dbg)),
			rt:   rtOf(sbs(s1), ra, rdbg),
			want: []v1.ContainerStatus{{
				Name: "debugger", Image: "debugger:1.0", ImageID: "sha256:debugger", ContainerID: "containerd://c-dbg",
				State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: mt(rdbg.StartedAt)}},
			}},
		},
		{
			name: "exited: terminated with its exit code, no restart",
			pod:  testPod(withContainers(a), withEphemeral(dbg)),
			rt:   rtOf(sbs(s1), ra, edbg),
			want: []v1.ContainerStatus{{
				Name: "debugger", Image: "debugger:1.0", ImageID: "sha256:debugger", ContainerID: "containerd://c-dbg",
				State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
					ExitCode: 3, Reason: "Error", StartedAt: mt(edbg.StartedAt), FinishedAt: mt(edbg.FinishedAt), ContainerID: "containerd://c-dbg",
				}},
			}},
		},
		{
			name: "sorted by name",
			pod:  testPod(withContainers(a), withEphemeral(dbg, dbg2)),
			rt:   rtOf(sbs(s1), ra, rdbg),
			want: []v1.ContainerStatus{
				waiting("aaa-debugger", "aaa-debugger:1.0", "ContainerCreating", ""),
				{
					Name: "debugger", Image: "debugger:1.0", ImageID: "sha256:debugger", ContainerID: "containerd://c-dbg",
					State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: mt(rdbg.StartedAt)}},
				},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := statusIn(tc.pod, tc.rt)
			in.Reasons = tc.reasons
			got := generatePodStatus(in)
			if diff := cmp.Diff(tc.want, got.EphemeralContainerStatuses, ignoreStatusResources); diff != "" {
				t.Errorf("ephemeralContainerStatuses (-want +got):\n%s", diff)
			}
			// The pod's own status is what it would be without the ephemeral containers.
			plain := tc.pod.DeepCopy()
			plain.Spec.EphemeralContainers = nil
			without := generatePodStatus(statusIn(plain, tc.rt))
			got.EphemeralContainerStatuses = nil
			if diff := cmp.Diff(without, got); diff != "" {
				t.Errorf("ephemeral containers changed the rest of the status (-without +with):\n%s", diff)
			}
		})
	}
}

// A pod whose regular containers are done under restartPolicy Never ends Succeeded even while
// an ephemeral container runs (the kubelet then kills it with the pod).
func TestPodPhaseIgnoresEphemeral(t *testing.T) {
	a, dbg := ctr("a"), ephemeral("debugger", "a")
	pod := testPod(withContainers(a), withRestart(v1.RestartPolicyNever), withEphemeral(dbg))
	got := generatePodStatus(statusIn(pod, rtOf(sbs(sandbox("s1", 0, true)), exited(a, "c-a", "s1", 0), running(asCtr(dbg), "c-dbg", "s1"))))
	if got.Phase != v1.PodSucceeded {
		t.Errorf("phase = %s, want Succeeded", got.Phase)
	}
}

func TestContainerRefEphemeral(t *testing.T) {
	pod := testPod(withInit(ctr("i1")), withContainers(ctr("a")), withEphemeral(ephemeral("debugger", "a")))
	cases := map[string]string{
		"a":        "spec.containers{a}",
		"i1":       "spec.initContainers{i1}",
		"debugger": "spec.ephemeralContainers{debugger}",
	}
	for name, want := range cases {
		if got := containerRef(pod, name, podspec.IsInitContainer(pod, name)).FieldPath; got != want {
			t.Errorf("containerRef(%s).FieldPath = %q, want %q", name, got, want)
		}
	}
}

func TestReportedEphemeral(t *testing.T) {
	st := func(name string) v1.ContainerStatus { return v1.ContainerStatus{Name: name} }
	got := reportedEphemeral([]v1.ContainerStatus{st("a"), st("late"), st("b")}, []v1.ContainerStatus{st("b"), st("a")})
	if diff := cmp.Diff([]v1.ContainerStatus{st("a"), st("b")}, got); diff != "" {
		t.Errorf("reportedEphemeral (-want +got):\n%s", diff)
	}
	if got := reportedEphemeral([]v1.ContainerStatus{st("late")}, nil); got != nil {
		t.Errorf("nothing reported before: got %v", got)
	}
}

func TestAdoptEphemeralSpec(t *testing.T) {
	api := testPod(withEphemeral(ephemeral("late", "")))
	cases := []struct {
		name     string
		finished bool
		pod      *v1.Pod
		want     bool
	}{
		{"finished pod: taken", true, testPod(), true},
		{"running pod: virtual-kubelet's UpdatePod brings it", false, testPod(), false},
		{"finished pod that has it already", true, testPod(withEphemeral(ephemeral("late", ""))), false},
		{"pod not claimed by the API yet", true, nil, false},
	}
	for _, tc := range cases {
		rec := newPodRecord(podIdentity{Namespace: testPodNS, Name: testPodName, UID: testPodUID}, tc.pod)
		if tc.finished {
			if err := rec.transition(lifecycleChange{to: podTerminated, reason: terminationFinished}); err != nil {
				t.Fatal(err)
			}
		}
		if got := adoptEphemeralSpec(rec, api); got != tc.want {
			t.Errorf("%s: adopted = %v, want %v", tc.name, got, tc.want)
		}
		if tc.want && (len(rec.pod.Spec.EphemeralContainers) != 1 || rec.pod.Spec.EphemeralContainers[0].Name != "late") {
			t.Errorf("%s: spec has %v", tc.name, rec.pod.Spec.EphemeralContainers)
		}
		if tc.want && len(tc.pod.Spec.EphemeralContainers) != 0 {
			t.Errorf("%s: the previous spec was modified in place", tc.name)
		}
	}
}

// An ephemeral container reported terminated stays terminated even when the runtime no longer
// holds it (the API refuses any other state for it, and then every later status of the pod).
func TestEphemeralStatusStaysTerminated(t *testing.T) {
	a, dbg := ctr("a"), ephemeral("debugger", "")
	pod := testPod(withContainers(a), withEphemeral(dbg))
	ended := v1.ContainerStatus{
		Name: "debugger", Image: "debugger:1.0", ImageID: "sha256:debugger", ContainerID: "containerd://c-dbg",
		State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 128, Reason: "StartError", ContainerID: "containerd://c-dbg"}},
	}
	pod.Status.EphemeralContainerStatuses = []v1.ContainerStatus{ended}
	in := statusIn(pod, rtOf(sbs(sandbox("s1", 0, true)), running(a, "c-a", "s1")))
	in.Reasons = map[string]waitingReason{"debugger": {Reason: "RunContainerError"}}
	got := generatePodStatus(in).EphemeralContainerStatuses
	if diff := cmp.Diff([]v1.ContainerStatus{ended}, got); diff != "" {
		t.Errorf("ephemeralContainerStatuses (-want +got):\n%s", diff)
	}
}

// The kubelet's reason cache forgets a start failure only when the container starts: an
// ephemeral container whose start failed after its creation is never tried again, so its
// failure stays; and it shows in the status of the sync that found it.
func TestEphemeralReasons(t *testing.T) {
	pod := testPod(withEphemeral(ephemeral("broken", ""), ephemeral("retried", ""), ephemeral("started", "")))
	runErr := waitingReason{Reason: "RunContainerError", Message: "exec: not found"}
	pullErr := waitingReason{Reason: "ErrImagePull", Message: "no such image"}
	crash := waitingReason{Reason: "CrashLoopBackOff"}
	prev := map[string]waitingReason{"broken": runErr, "retried": pullErr, "started": pullErr, "app": crash}
	// This sync tried retried (it failed again) and started (it started); app was found in
	// back-off again.
	cur := map[string]waitingReason{"retried": {Reason: "ImagePullBackOff"}, "app": crash}

	now := withEphemeralFailures(pod, []int{1, 2}, prev, cur)
	wantNow := map[string]waitingReason{"broken": runErr, "retried": {Reason: "ImagePullBackOff"}, "app": crash}
	if diff := cmp.Diff(wantNow, now); diff != "" {
		t.Errorf("withEphemeralFailures (-want +got):\n%s", diff)
	}
	if _, touched := prev["retried"]; !touched || prev["retried"] != pullErr {
		t.Errorf("withEphemeralFailures modified its input: %v", prev)
	}
	next := keptEphemeralReasons(pod, []int{1, 2}, now, cur)
	wantNext := map[string]waitingReason{"broken": runErr, "retried": {Reason: "ImagePullBackOff"}, "app": crash}
	if diff := cmp.Diff(wantNext, next); diff != "" {
		t.Errorf("keptEphemeralReasons (-want +got):\n%s", diff)
	}
	if got := keptEphemeralReasons(testPod(), nil, prev, nil); len(got) != 0 {
		t.Errorf("a pod without ephemeral containers keeps nothing: %v", got)
	}
}

// A container whose start failed after its creation and that exited (StartError) shows the
// failure as its waiting reason over the StartError, as with the kubelet, unless the pod's
// restart policy would never restart it.
func TestGeneratePodStatusEphemeralStartError(t *testing.T) {
	a, broken := ctr("a"), ephemeral("broken", "")
	startErr := exited(asCtr(broken), "c-b", "s1", 128, reason("StartError", "exec: not found"))
	reasons := map[string]waitingReason{"broken": {Reason: "RunContainerError", Message: "exec: not found"}}
	for _, tc := range []struct {
		policy  v1.RestartPolicy
		waiting bool
	}{{v1.RestartPolicyAlways, true}, {v1.RestartPolicyOnFailure, true}, {v1.RestartPolicyNever, false}} {
		in := statusIn(testPod(withContainers(a), withRestart(tc.policy), withEphemeral(broken)), rtOf(sbs(sandbox("s1", 0, true)), running(a, "c-a", "s1"), startErr))
		in.Reasons = reasons
		st := generatePodStatus(in).EphemeralContainerStatuses[0]
		switch {
		case tc.waiting && (st.State.Waiting == nil || st.State.Waiting.Reason != "RunContainerError" || st.LastTerminationState.Terminated == nil || st.LastTerminationState.Terminated.Reason != "StartError"):
			t.Errorf("%s: %+v, want waiting RunContainerError over terminated StartError", tc.policy, st)
		case !tc.waiting && (st.State.Terminated == nil || st.State.Terminated.Reason != "StartError"):
			t.Errorf("%s: %+v, want terminated StartError", tc.policy, st)
		}
	}
}
