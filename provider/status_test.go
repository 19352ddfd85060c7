package provider

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var (
	statusNow = testT0.Add(10 * time.Minute)
	hostIPs   = []string{"192.168.1.10", "fd00::10"}
)

func statusIn(pod *v1.Pod, rt *podRuntime) statusInput {
	return statusInput{Pod: pod, Runtime: rt, RuntimeName: "containerd", HostIPs: hostIPs, Now: statusNow}
}

func findCond(conds []v1.PodCondition, typ v1.PodConditionType) (v1.PodCondition, bool) {
	for _, c := range conds {
		if c.Type == typ {
			return c, true
		}
	}
	return v1.PodCondition{}, false
}

// condSummary is a condition without its times and generation.
type condSummary struct {
	Type    v1.PodConditionType
	Status  v1.ConditionStatus
	Reason  string
	Message string
}

func summarize(conds []v1.PodCondition) []condSummary {
	out := make([]condSummary, 0, len(conds))
	for _, c := range conds {
		out = append(out, condSummary{c.Type, c.Status, c.Reason, c.Message})
	}
	return out
}

// ignoreStatusResources leaves out the resources fields of container statuses, which
// status_resources_test.go covers.
var ignoreStatusResources = cmpopts.IgnoreFields(v1.ContainerStatus{}, "Resources", "AllocatedResources")

func mt(t time.Time) metav1.Time { return metav1.NewTime(t) }

// A running single-container pod, compared field by field with what the kubelet reports.
func TestGeneratePodStatusRunningPodFull(t *testing.T) {
	a := ctr("a")
	pod := testPod(withContainers(a))
	pod.Status.QOSClass = v1.PodQOSBestEffort
	ra := running(a, "c-a", "s1")
	got := generatePodStatus(statusIn(pod, rtOf(sbs(sandbox("s1", 0, true)), ra)))

	now := mt(statusNow)
	want := v1.PodStatus{
		Phase:              v1.PodRunning,
		QOSClass:           v1.PodQOSBestEffort,
		ObservedGeneration: 3,
		StartTime:          &now,
		HostIP:             "192.168.1.10",
		HostIPs:            []v1.HostIP{{IP: "192.168.1.10"}, {IP: "fd00::10"}},
		PodIP:              "10.0.0.5",
		PodIPs:             []v1.PodIP{{IP: "10.0.0.5"}},
		Conditions: []v1.PodCondition{
			{Type: v1.PodReadyToStartContainers, Status: v1.ConditionTrue, ObservedGeneration: 3, LastTransitionTime: now},
			{Type: v1.PodInitialized, Status: v1.ConditionTrue, ObservedGeneration: 3, LastTransitionTime: now},
			{Type: v1.PodReady, Status: v1.ConditionTrue, ObservedGeneration: 3, LastTransitionTime: now},
			{Type: v1.ContainersReady, Status: v1.ConditionTrue, ObservedGeneration: 3, LastTransitionTime: now},
			{Type: v1.PodScheduled, Status: v1.ConditionTrue, ObservedGeneration: 3, LastTransitionTime: now},
		},
		ContainerStatuses: []v1.ContainerStatus{{
			Name:        "a",
			Image:       "a:1.0",
			ImageID:     "sha256:a",
			ContainerID: "containerd://c-a",
			State:       v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: mt(ra.StartedAt)}},
			Ready:       true,
			Started:     ptrTo(true),
			Resources:   &v1.ResourceRequirements{},
		}},
		Resources: &v1.ResourceRequirements{},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("generatePodStatus (-want +got):\n%s", diff)
	}
}

func TestGeneratePodStatusContainerStatuses(t *testing.T) {
	a, b := ctr("a"), ctr("b")
	i1 := ctr("i1")
	side := sidecarCtr("side")
	s1 := sandbox("s1", 0, true)

	ea := exited(a, "c-a", "s1", 2, reason("Error", "boom"))
	ea0 := exited(a, "c-a-0", "s1", 1, reason("Error", "first"))
	ea1 := exited(a, "c-a-1", "s1", 3, restarts(1), reason("Error", "second"))
	ra1 := running(a, "c-a-1", "s1", restarts(1))
	oom := exited(a, "c-a", "s1", 137, reason("OOMKilled", ""))

	terminated := func(cs *containerState) *v1.ContainerStateTerminated {
		return &v1.ContainerStateTerminated{
			ExitCode:    cs.ExitCode,
			Reason:      cs.Reason,
			Message:     cs.Message,
			StartedAt:   mt(cs.StartedAt),
			FinishedAt:  mt(cs.FinishedAt),
			ContainerID: "containerd://" + cs.ID,
		}
	}

	cases := []struct {
		name    string
		in      statusInput
		init    bool // compare InitContainerStatuses instead of ContainerStatuses
		want    []v1.ContainerStatus
		wantNil bool
	}{
		{
			name: "no instance yet: waiting ContainerCreating",
			in:   statusIn(testPod(withContainers(a)), &podRuntime{}),
			want: []v1.ContainerStatus{{
				Name: "a", Image: "a:1.0", Started: ptrTo(false),
				State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ContainerCreating"}},
			}},
		},
		{
			name: "no instance yet, pod with init containers: regular containers wait with PodInitializing",
			in:   statusIn(testPod(withInit(i1), withContainers(a)), rtOf(sbs(s1), running(i1, "c-i1", "s1"))),
			want: []v1.ContainerStatus{{
				Name: "a", Image: "a:1.0", Started: ptrTo(false),
				State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "PodInitializing"}},
			}},
		},
		{
			name: "init containers not started yet wait with PodInitializing too",
			in:   statusIn(testPod(withInit(i1), withContainers(a)), &podRuntime{}),
			init: true,
			want: []v1.ContainerStatus{{
				Name: "i1", Image: "i1:1.0", Started: ptrTo(false),
				State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "PodInitializing"}},
			}},
		},
		{
			name: "exited: terminated with reason, message, exit code and container ID",
			in:   statusIn(testPod(withContainers(a)), rtOf(sbs(s1), ea)),
			want: []v1.ContainerStatus{{
				Name: "a", Image: "a:1.0", ImageID: "sha256:a", ContainerID: "containerd://c-a", Started: ptrTo(false),
				State: v1.ContainerState{Terminated: terminated(ea)},
			}},
		},
		{
			name: "OOM-killed: the runtime's reason is kept",
			in:   statusIn(testPod(withContainers(a)), rtOf(sbs(s1), oom)),
			want: []v1.ContainerStatus{{
				Name: "a", Image: "a:1.0", ImageID: "sha256:a", ContainerID: "containerd://c-a", Started: ptrTo(false),
				State: v1.ContainerState{Terminated: terminated(oom)},
			}},
		},
		{
			name: "container ID prefix is the runtime's name",
			in: func() statusInput {
				in := statusIn(testPod(withContainers(a)), rtOf(sbs(s1), running(a, "c-a", "s1")))
				in.RuntimeName = "cri-o"
				return in
			}(),
			want: []v1.ContainerStatus{{
				Name: "a", Image: "a:1.0", ImageID: "sha256:a", ContainerID: "cri-o://c-a", Started: ptrTo(true), Ready: true,
				State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: mt(running(a, "c-a", "s1").StartedAt)}},
			}},
		},
		{
			name: "two instances: the older one is the last termination state",
			in:   statusIn(testPod(withContainers(a)), rtOf(sbs(s1), ea0, ra1)),
			want: []v1.ContainerStatus{{
				Name: "a", Image: "a:1.0", ImageID: "sha256:a", ContainerID: "containerd://c-a-1", Started: ptrTo(true), Ready: true,
				RestartCount:         1,
				State:                v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: mt(ra1.StartedAt)}},
				LastTerminationState: v1.ContainerState{Terminated: terminated(ea0)},
			}},
		},
		{
			name: "back-off overlay: waiting with reason and message, terminated state moves to last termination",
			in: func() statusInput {
				in := statusIn(testPod(withContainers(a)), rtOf(sbs(s1), ea0, ea1))
				in.Reasons = map[string]waitingReason{"a": crashLoop("a", 20*time.Second)}
				return in
			}(),
			want: []v1.ContainerStatus{{
				Name: "a", Image: "a:1.0", ImageID: "sha256:a", ContainerID: "containerd://c-a-1", Started: ptrTo(false),
				RestartCount: 1,
				State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{
					Reason:  "CrashLoopBackOff",
					Message: "back-off 20s restarting failed container=a pod=web_default(uid-1)",
				}},
				LastTerminationState: v1.ContainerState{Terminated: terminated(ea1)},
			}},
		},
		{
			name: "start-failure overlay on a container that never ran: waiting with the error",
			in: func() statusInput {
				in := statusIn(testPod(withContainers(a)), rtOf(sbs(s1)))
				in.Reasons = map[string]waitingReason{"a": {Reason: "ErrImagePull", Message: "failed to pull image \"a:1.0\": not found"}}
				return in
			}(),
			want: []v1.ContainerStatus{{
				Name: "a", Image: "a:1.0", Started: ptrTo(false),
				State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ErrImagePull", Message: "failed to pull image \"a:1.0\": not found"}},
			}},
		},
		{
			name: "overlay on a created-but-not-started instance keeps the previous termination",
			in: func() statusInput {
				in := statusIn(testPod(withContainers(a)), rtOf(sbs(s1), ea0, created(a, "c-a-1", "s1", restarts(1))))
				in.Reasons = map[string]waitingReason{"a": {Reason: "RunContainerError", Message: "exec: not found"}}
				return in
			}(),
			want: []v1.ContainerStatus{{
				Name: "a", Image: "a:1.0", ImageID: "sha256:a", ContainerID: "containerd://c-a-1", Started: ptrTo(false),
				RestartCount:         1,
				State:                v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "RunContainerError", Message: "exec: not found"}},
				LastTerminationState: v1.ContainerState{Terminated: terminated(ea0)},
			}},
		},
		{
			name: "created-but-not-started without a reason: empty waiting state",
			in:   statusIn(testPod(withContainers(a)), rtOf(sbs(s1), created(a, "c-a", "s1"))),
			want: []v1.ContainerStatus{{
				Name: "a", Image: "a:1.0", ImageID: "sha256:a", ContainerID: "containerd://c-a", Started: ptrTo(false),
				State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{}},
			}},
		},
		{
			name: "overlay is ignored for a running container",
			in: func() statusInput {
				in := statusIn(testPod(withContainers(a)), rtOf(sbs(s1), ea0, ra1))
				in.Reasons = map[string]waitingReason{"a": crashLoop("a", 10*time.Second)}
				return in
			}(),
			want: []v1.ContainerStatus{{
				Name: "a", Image: "a:1.0", ImageID: "sha256:a", ContainerID: "containerd://c-a-1", Started: ptrTo(true), Ready: true,
				RestartCount:         1,
				State:                v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: mt(ra1.StartedAt)}},
				LastTerminationState: v1.ContainerState{Terminated: terminated(ea0)},
			}},
		},
		{
			name: "overlay is ignored once the pod is terminal",
			in: func() statusInput {
				in := statusIn(testPod(withContainers(a)), rtOf(sbs(s1), ea))
				in.Reasons = map[string]waitingReason{"a": crashLoop("a", 10*time.Second)}
				in.Terminal = true
				return in
			}(),
			want: []v1.ContainerStatus{{
				Name: "a", Image: "a:1.0", ImageID: "sha256:a", ContainerID: "containerd://c-a", Started: ptrTo(false),
				State: v1.ContainerState{Terminated: terminated(ea)},
			}},
		},
		{
			name: "regular statuses are sorted by name",
			in:   statusIn(testPod(withContainers(ctr("zeta"), ctr("alpha"), ctr("mid"))), &podRuntime{}),
			want: []v1.ContainerStatus{
				{Name: "alpha", Image: "alpha:1.0", Started: ptrTo(false), State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ContainerCreating"}}},
				{Name: "mid", Image: "mid:1.0", Started: ptrTo(false), State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ContainerCreating"}}},
				{Name: "zeta", Image: "zeta:1.0", Started: ptrTo(false), State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ContainerCreating"}}},
			},
		},
		{
			name: "init statuses stay in spec order",
			in:   statusIn(testPod(withInit(ctr("zinit"), ctr("ainit")), withContainers(a)), &podRuntime{}),
			init: true,
			want: []v1.ContainerStatus{
				{Name: "zinit", Image: "zinit:1.0", Started: ptrTo(false), State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "PodInitializing"}}},
				{Name: "ainit", Image: "ainit:1.0", Started: ptrTo(false), State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "PodInitializing"}}},
			},
		},
		{
			name:    "no init containers: no init statuses",
			in:      statusIn(testPod(withContainers(a)), &podRuntime{}),
			init:    true,
			wantNil: true,
		},
		{
			name: "init container exited 0: ready, not started",
			in:   statusIn(testPod(withInit(i1), withContainers(a)), rtOf(sbs(s1), exited(i1, "c-i1", "s1", 0))),
			init: true,
			want: []v1.ContainerStatus{{
				Name: "i1", Image: "i1:1.0", ImageID: "sha256:i1", ContainerID: "containerd://c-i1", Started: ptrTo(false), Ready: true,
				State: v1.ContainerState{Terminated: terminated(exited(i1, "c-i1", "s1", 0))},
			}},
		},
		{
			name: "init container failed: not ready",
			in:   statusIn(testPod(withInit(i1), withContainers(a)), rtOf(sbs(s1), exited(i1, "c-i1", "s1", 1))),
			init: true,
			want: []v1.ContainerStatus{{
				Name: "i1", Image: "i1:1.0", ImageID: "sha256:i1", ContainerID: "containerd://c-i1", Started: ptrTo(false),
				State: v1.ContainerState{Terminated: terminated(exited(i1, "c-i1", "s1", 1))},
			}},
		},
		{
			name: "init container running: started, not ready",
			in:   statusIn(testPod(withInit(i1), withContainers(a)), rtOf(sbs(s1), running(i1, "c-i1", "s1"))),
			init: true,
			want: []v1.ContainerStatus{{
				Name: "i1", Image: "i1:1.0", ImageID: "sha256:i1", ContainerID: "containerd://c-i1", Started: ptrTo(true),
				State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: mt(running(i1, "c-i1", "s1").StartedAt)}},
			}},
		},
		{
			name: "sidecar running: started and ready",
			in:   statusIn(testPod(withInit(side), withContainers(a)), rtOf(sbs(s1), running(side, "c-side", "s1"))),
			init: true,
			want: []v1.ContainerStatus{{
				Name: "side", Image: "side:1.0", ImageID: "sha256:side", ContainerID: "containerd://c-side", Started: ptrTo(true), Ready: true,
				State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: mt(running(side, "c-side", "s1").StartedAt)}},
			}},
		},
		{
			name: "sidecar exited 0: not ready",
			in:   statusIn(testPod(withInit(side), withContainers(a)), rtOf(sbs(s1), exited(side, "c-side", "s1", 0))),
			init: true,
			want: []v1.ContainerStatus{{
				Name: "side", Image: "side:1.0", ImageID: "sha256:side", ContainerID: "containerd://c-side", Started: ptrTo(false),
				State: v1.ContainerState{Terminated: terminated(exited(side, "c-side", "s1", 0))},
			}},
		},
		{
			name: "statuses of containers not in the spec are not reported",
			in:   statusIn(testPod(withContainers(a)), rtOf(sbs(s1), running(b, "c-b", "s1"))),
			want: []v1.ContainerStatus{{
				Name: "a", Image: "a:1.0", Started: ptrTo(false),
				State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ContainerCreating"}},
			}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := generatePodStatus(tc.in)
			got := st.ContainerStatuses
			if tc.init {
				got = st.InitContainerStatuses
			}
			if tc.wantNil {
				if got != nil {
					t.Errorf("statuses = %+v, want nil", got)
				}
				return
			}
			if diff := cmp.Diff(tc.want, got, ignoreStatusResources); diff != "" {
				t.Errorf("statuses (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGeneratePodStatusConditions(t *testing.T) {
	a, b := ctr("a"), ctr("b")
	i1 := ctr("i1")
	side := sidecarCtr("side")
	s1 := sandbox("s1", 0, true)

	cases := []struct {
		name      string
		in        statusInput
		wantPhase v1.PodPhase
		want      []condSummary
		bug       string
	}{
		{
			name:      "no sandbox yet",
			in:        statusIn(testPod(withContainers(a)), &podRuntime{}),
			wantPhase: v1.PodPending,
			want: []condSummary{
				{v1.PodReadyToStartContainers, v1.ConditionFalse, "PodSandboxNotReady", "no pod sandbox exists"},
				{v1.PodInitialized, v1.ConditionTrue, "", ""},
				{v1.PodReady, v1.ConditionFalse, "ContainersNotReady", "containers with unready status: [a]"},
				{v1.ContainersReady, v1.ConditionFalse, "ContainersNotReady", "containers with unready status: [a]"},
			},
		},
		{
			name:      "sandbox not ready",
			in:        statusIn(testPod(withContainers(a)), rtOf(sbs(sandbox("s1", 0, false)), exited(a, "c-a", "s1", 1))),
			wantPhase: v1.PodRunning,
			want: []condSummary{
				{v1.PodReadyToStartContainers, v1.ConditionFalse, "PodSandboxNotReady", "pod sandbox is not ready"},
				{v1.PodInitialized, v1.ConditionTrue, "", ""},
				{v1.PodReady, v1.ConditionFalse, "ContainersNotReady", "containers with unready status: [a]"},
				{v1.ContainersReady, v1.ConditionFalse, "ContainersNotReady", "containers with unready status: [a]"},
			},
		},
		{
			name: "sandbox ready without an IP",
			in: statusIn(testPod(withContainers(a)), rtOf(sbs(func() *sandboxState {
				sb := sandbox("s1", 0, true)
				sb.IPs = nil
				return sb
			}()))),
			wantPhase: v1.PodPending,
			want: []condSummary{
				{v1.PodReadyToStartContainers, v1.ConditionFalse, "PodSandboxNotReady", "pod sandbox has no IP address"},
				{v1.PodInitialized, v1.ConditionTrue, "", ""},
				{v1.PodReady, v1.ConditionFalse, "ContainersNotReady", "containers with unready status: [a]"},
				{v1.ContainersReady, v1.ConditionFalse, "ContainersNotReady", "containers with unready status: [a]"},
			},
		},
		{
			name: "host-network sandbox needs no IP",
			in: statusIn(testPod(withContainers(a), withHostNetwork()), rtOf(sbs(func() *sandboxState {
				sb := sandbox("s1", 0, true)
				sb.IPs = nil
				return sb
			}()), running(a, "c-a", "s1"))),
			wantPhase: v1.PodRunning,
			want: []condSummary{
				{v1.PodReadyToStartContainers, v1.ConditionTrue, "", ""},
				{v1.PodInitialized, v1.ConditionTrue, "", ""},
				{v1.PodReady, v1.ConditionTrue, "", ""},
				{v1.ContainersReady, v1.ConditionTrue, "", ""},
			},
		},
		{
			name:      "one of two containers running",
			in:        statusIn(testPod(withContainers(a, b)), rtOf(sbs(s1), running(a, "c-a", "s1"), exited(b, "c-b", "s1", 1))),
			wantPhase: v1.PodRunning,
			want: []condSummary{
				{v1.PodReadyToStartContainers, v1.ConditionTrue, "", ""},
				{v1.PodInitialized, v1.ConditionTrue, "", ""},
				{v1.PodReady, v1.ConditionFalse, "ContainersNotReady", "containers with unready status: [b]"},
				{v1.ContainersReady, v1.ConditionFalse, "ContainersNotReady", "containers with unready status: [b]"},
			},
		},
		{
			name:      "unready containers are listed in name order",
			in:        statusIn(testPod(withContainers(ctr("zeta"), ctr("alpha"))), rtOf(sbs(s1))),
			wantPhase: v1.PodPending,
			want: []condSummary{
				{v1.PodReadyToStartContainers, v1.ConditionTrue, "", ""},
				{v1.PodInitialized, v1.ConditionTrue, "", ""},
				{v1.PodReady, v1.ConditionFalse, "ContainersNotReady", "containers with unready status: [zeta alpha]"},
				{v1.ContainersReady, v1.ConditionFalse, "ContainersNotReady", "containers with unready status: [zeta alpha]"},
			},
		},
		{
			name:      "init container running",
			in:        statusIn(testPod(withInit(i1), withContainers(a)), rtOf(sbs(s1), running(i1, "c-i1", "s1"))),
			wantPhase: v1.PodPending,
			want: []condSummary{
				{v1.PodReadyToStartContainers, v1.ConditionTrue, "", ""},
				{v1.PodInitialized, v1.ConditionFalse, "ContainersNotInitialized", "containers with incomplete status: [i1]"},
				{v1.PodReady, v1.ConditionFalse, "ContainersNotReady", "containers with unready status: [a]"},
				{v1.ContainersReady, v1.ConditionFalse, "ContainersNotReady", "containers with unready status: [a]"},
			},
		},
		{
			name:      "init container done, regular container running",
			in:        statusIn(testPod(withInit(i1), withContainers(a)), rtOf(sbs(s1), exited(i1, "c-i1", "s1", 0), running(a, "c-a", "s1"))),
			wantPhase: v1.PodRunning,
			want: []condSummary{
				{v1.PodReadyToStartContainers, v1.ConditionTrue, "", ""},
				{v1.PodInitialized, v1.ConditionTrue, "", ""},
				{v1.PodReady, v1.ConditionTrue, "", ""},
				{v1.ContainersReady, v1.ConditionTrue, "", ""},
			},
		},
		{
			name:      "failed init container under Never: pod failed",
			in:        statusIn(testPod(withInit(i1), withContainers(a), withRestart(v1.RestartPolicyNever)), rtOf(sbs(s1), exited(i1, "c-i1", "s1", 1))),
			wantPhase: v1.PodFailed,
			want: []condSummary{
				{v1.PodReadyToStartContainers, v1.ConditionTrue, "", ""},
				{v1.PodInitialized, v1.ConditionFalse, "ContainersNotInitialized", "containers with incomplete status: [i1]"},
				{v1.PodReady, v1.ConditionFalse, "PodFailed", ""},
				{v1.ContainersReady, v1.ConditionFalse, "PodFailed", ""},
			},
		},
		{
			name: "sidecar running, regular container running: sidecar counts for readiness",
			in: statusIn(testPod(withInit(side), withContainers(a)),
				rtOf(sbs(s1), running(side, "c-side", "s1"), running(a, "c-a", "s1"))),
			wantPhase: v1.PodRunning,
			want: []condSummary{
				{v1.PodReadyToStartContainers, v1.ConditionTrue, "", ""},
				{v1.PodInitialized, v1.ConditionTrue, "", ""},
				{v1.PodReady, v1.ConditionTrue, "", ""},
				{v1.ContainersReady, v1.ConditionTrue, "", ""},
			},
		},
		{
			name: "sidecar exited after initialization: unready",
			in: statusIn(testPod(withInit(side), withContainers(a)),
				rtOf(sbs(s1), exited(side, "c-side", "s1", 1), running(a, "c-a", "s1"))),
			wantPhase: v1.PodRunning,
			want: []condSummary{
				{v1.PodReadyToStartContainers, v1.ConditionTrue, "", ""},
				{v1.PodInitialized, v1.ConditionTrue, "", ""},
				{v1.PodReady, v1.ConditionFalse, "ContainersNotReady", "containers with unready status: [side]"},
				{v1.ContainersReady, v1.ConditionFalse, "ContainersNotReady", "containers with unready status: [side]"},
			},
		},
		{
			name:      "succeeded pod: Ready False PodCompleted",
			in:        statusIn(testPod(withContainers(a, b), withRestart(v1.RestartPolicyNever)), rtOf(sbs(s1), exited(a, "c-a", "s1", 0), exited(b, "c-b", "s1", 0))),
			wantPhase: v1.PodSucceeded,
			want: []condSummary{
				{v1.PodReadyToStartContainers, v1.ConditionTrue, "", ""},
				{v1.PodInitialized, v1.ConditionTrue, "PodCompleted", ""},
				{v1.PodReady, v1.ConditionFalse, "PodCompleted", ""},
				{v1.ContainersReady, v1.ConditionFalse, "PodCompleted", ""},
			},
		},
		{
			name:      "failed pod: Ready False PodFailed",
			in:        statusIn(testPod(withContainers(a, b), withRestart(v1.RestartPolicyNever)), rtOf(sbs(s1), exited(a, "c-a", "s1", 0), exited(b, "c-b", "s1", 1))),
			wantPhase: v1.PodFailed,
			want: []condSummary{
				{v1.PodReadyToStartContainers, v1.ConditionTrue, "", ""},
				{v1.PodInitialized, v1.ConditionTrue, "", ""},
				{v1.PodReady, v1.ConditionFalse, "PodFailed", ""},
				{v1.ContainersReady, v1.ConditionFalse, "PodFailed", ""},
			},
		},
		{
			name: "terminal Always pod whose containers exited 0: succeeded",
			in: func() statusInput {
				in := statusIn(testPod(withContainers(a)), rtOf(sbs(sandbox("s1", 0, false)), exited(a, "c-a", "s1", 0)))
				in.Terminal = true
				return in
			}(),
			wantPhase: v1.PodSucceeded,
			want: []condSummary{
				{v1.PodReadyToStartContainers, v1.ConditionFalse, "PodSandboxNotReady", "pod sandbox is not ready"},
				{v1.PodInitialized, v1.ConditionTrue, "PodCompleted", ""},
				{v1.PodReady, v1.ConditionFalse, "PodCompleted", ""},
				{v1.ContainersReady, v1.ConditionFalse, "PodCompleted", ""},
			},
		},
		{
			name: "crash-looping container under Always: running, not ready",
			in: func() statusInput {
				in := statusIn(testPod(withContainers(a)), rtOf(sbs(s1), exited(a, "c-a", "s1", 1)))
				in.Reasons = map[string]waitingReason{"a": crashLoop("a", 10*time.Second)}
				return in
			}(),
			wantPhase: v1.PodRunning,
			want: []condSummary{
				{v1.PodReadyToStartContainers, v1.ConditionTrue, "", ""},
				{v1.PodInitialized, v1.ConditionTrue, "", ""},
				{v1.PodReady, v1.ConditionFalse, "ContainersNotReady", "containers with unready status: [a]"},
				{v1.ContainersReady, v1.ConditionFalse, "ContainersNotReady", "containers with unready status: [a]"},
			},
		},
		{
			name: "PodScheduled is carried over, after the kubelet's conditions",
			in: func() statusInput {
				pod := testPod(withContainers(a))
				pod.Status.Conditions = []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: mt(testT0)}}
				return statusIn(pod, rtOf(sbs(s1), running(a, "c-a", "s1")))
			}(),
			wantPhase: v1.PodRunning,
			want: []condSummary{
				{v1.PodReadyToStartContainers, v1.ConditionTrue, "", ""},
				{v1.PodInitialized, v1.ConditionTrue, "", ""},
				{v1.PodReady, v1.ConditionTrue, "", ""},
				{v1.ContainersReady, v1.ConditionTrue, "", ""},
			},
		},
		{
			name: "old kubelet-owned conditions are replaced, not duplicated",
			in: func() statusInput {
				pod := testPod(withContainers(a))
				pod.Status.Conditions = []v1.PodCondition{
					{Type: v1.PodReady, Status: v1.ConditionFalse, Reason: "ContainersNotReady"},
					{Type: v1.ContainersReady, Status: v1.ConditionFalse},
					{Type: v1.PodInitialized, Status: v1.ConditionTrue},
				}
				return statusIn(pod, rtOf(sbs(s1), running(a, "c-a", "s1")))
			}(),
			wantPhase: v1.PodRunning,
			want: []condSummary{
				{v1.PodReadyToStartContainers, v1.ConditionTrue, "", ""},
				{v1.PodInitialized, v1.ConditionTrue, "", ""},
				{v1.PodReady, v1.ConditionTrue, "", ""},
				{v1.ContainersReady, v1.ConditionTrue, "", ""},
			},
		},

		// --- kubelet behaviour not reproduced ---
		{
			name: "conditions owned by others (DisruptionTarget, readiness gates) are kept",
			in: func() statusInput {
				pod := testPod(withContainers(a))
				pod.Status.Conditions = []v1.PodCondition{
					{Type: v1.PodScheduled, Status: v1.ConditionTrue},
					{Type: "example.com/gate", Status: v1.ConditionTrue},
				}
				pod.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: "example.com/gate"}}
				return statusIn(pod, rtOf(sbs(s1), running(a, "c-a", "s1")))
			}(),
			wantPhase: v1.PodRunning,
			want: []condSummary{
				{"example.com/gate", v1.ConditionTrue, "", ""},
				{v1.PodReadyToStartContainers, v1.ConditionTrue, "", ""},
				{v1.PodInitialized, v1.ConditionTrue, "", ""},
				{v1.PodReady, v1.ConditionTrue, "", ""},
				{v1.ContainersReady, v1.ConditionTrue, "", ""},
			},
			bug: "generatePodStatus drops every old condition except PodScheduled; the kubelet keeps conditions it does not own (readiness gates, DisruptionTarget), first in the list",
		},
		{
			name: "unsatisfied readiness gate: Ready False ReadinessGatesNotReady",
			in: func() statusInput {
				pod := testPod(withContainers(a))
				pod.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: "example.com/gate"}}
				return statusIn(pod, rtOf(sbs(s1), running(a, "c-a", "s1")))
			}(),
			wantPhase: v1.PodRunning,
			want: []condSummary{
				{v1.PodReadyToStartContainers, v1.ConditionTrue, "", ""},
				{v1.PodInitialized, v1.ConditionTrue, "", ""},
				{v1.PodReady, v1.ConditionFalse, "ReadinessGatesNotReady", `corresponding condition of pod readiness gate "example.com/gate" does not exist.`},
				{v1.ContainersReady, v1.ConditionTrue, "", ""},
			},
			bug: "spec.readinessGates are ignored: Ready is a copy of ContainersReady",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := generatePodStatus(tc.in)
			// The kubelet always reports PodScheduled True last.
			want := append(append([]condSummary{}, tc.want...), condSummary{v1.PodScheduled, v1.ConditionTrue, "", ""})
			diff := cmp.Diff(want, summarize(st.Conditions))
			if st.Phase != tc.wantPhase {
				diff += "\nphase: -" + string(tc.wantPhase) + " +" + string(st.Phase)
			}
			if tc.bug != "" {
				knownBug(t, tc.bug, diff)
				return
			}
			if diff != "" {
				t.Errorf("conditions/phase (-want +got):\n%s", diff)
			}
			for _, c := range st.Conditions {
				if c.ObservedGeneration != tc.in.Pod.Generation {
					t.Errorf("condition %s observedGeneration = %d, want %d", c.Type, c.ObservedGeneration, tc.in.Pod.Generation)
				}
				if c.LastTransitionTime.IsZero() {
					t.Errorf("condition %s has no lastTransitionTime", c.Type)
				}
			}
		})
	}
}

func TestGeneratePodStatusTransitionTimes(t *testing.T) {
	a := ctr("a")
	earlier := testT0.Add(-time.Hour)
	pod := testPod(withContainers(a))
	pod.Status.Conditions = []v1.PodCondition{
		{Type: v1.PodReadyToStartContainers, Status: v1.ConditionTrue, LastTransitionTime: mt(earlier)},
		{Type: v1.PodInitialized, Status: v1.ConditionTrue}, // no time: gets now
		{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: mt(earlier)},
		{Type: v1.ContainersReady, Status: v1.ConditionTrue, LastTransitionTime: mt(earlier)},
		{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: mt(earlier.Add(-time.Minute)), ObservedGeneration: 1},
	}
	// The container died: Ready and ContainersReady change, the sandbox condition does not.
	st := generatePodStatus(statusIn(pod, rtOf(sbs(sandbox("s1", 0, true)), exited(a, "c-a", "s1", 1))))
	want := map[v1.PodConditionType]time.Time{
		v1.PodReadyToStartContainers: earlier,
		v1.PodInitialized:            statusNow,
		v1.PodReady:                  statusNow,
		v1.ContainersReady:           statusNow,
		v1.PodScheduled:              earlier.Add(-time.Minute),
	}
	for typ, w := range want {
		c, ok := findCond(st.Conditions, typ)
		if !ok {
			t.Errorf("no %s condition", typ)
			continue
		}
		if !c.LastTransitionTime.Time.Equal(w) {
			t.Errorf("%s lastTransitionTime = %v, want %v", typ, c.LastTransitionTime.Time, w)
		}
	}
	if c, _ := findCond(st.Conditions, v1.PodScheduled); c.ObservedGeneration != 3 {
		t.Errorf("PodScheduled observedGeneration = %d, want the pod's generation 3", c.ObservedGeneration)
	}
}

func TestGeneratePodStatusAddresses(t *testing.T) {
	a := ctr("a")
	dual := sandbox("s1", 0, true)
	dual.IPs = []string{"10.0.0.7", "fd00::7"}
	dead := sandbox("s1", 0, false)
	oldIPs := []v1.PodIP{{IP: "10.0.0.3"}}

	cases := []struct {
		name       string
		pod        *v1.Pod
		rt         *podRuntime
		hostIPs    []string
		wantPodIP  string
		wantPodIPs []v1.PodIP
		wantHostIP string
	}{
		{
			name:       "pod IP from the sandbox",
			pod:        testPod(withContainers(a)),
			rt:         rtOf(sbs(sandbox("s1", 0, true))),
			hostIPs:    hostIPs,
			wantPodIP:  "10.0.0.5",
			wantPodIPs: []v1.PodIP{{IP: "10.0.0.5"}},
			wantHostIP: "192.168.1.10",
		},
		{
			name:       "dual-stack sandbox: first IP is podIP",
			pod:        testPod(withContainers(a)),
			rt:         rtOf(sbs(dual)),
			hostIPs:    hostIPs,
			wantPodIP:  "10.0.0.7",
			wantPodIPs: []v1.PodIP{{IP: "10.0.0.7"}, {IP: "fd00::7"}},
			wantHostIP: "192.168.1.10",
		},
		{
			name: "stopped sandbox reports no IP: the old pod IPs are kept",
			pod: func() *v1.Pod {
				p := testPod(withContainers(a))
				p.Status.PodIP = "10.0.0.3"
				p.Status.PodIPs = oldIPs
				return p
			}(),
			rt:         rtOf(sbs(dead)),
			hostIPs:    hostIPs,
			wantPodIP:  "10.0.0.3",
			wantPodIPs: oldIPs,
			wantHostIP: "192.168.1.10",
		},
		{
			name:       "no sandbox and no old IPs: none",
			pod:        testPod(withContainers(a)),
			rt:         &podRuntime{},
			hostIPs:    hostIPs,
			wantHostIP: "192.168.1.10",
		},
		{
			name:       "host network: pod IPs are the host IPs",
			pod:        testPod(withContainers(a), withHostNetwork()),
			rt:         rtOf(sbs(sandbox("s1", 0, true))),
			hostIPs:    hostIPs,
			wantPodIP:  "192.168.1.10",
			wantPodIPs: []v1.PodIP{{IP: "192.168.1.10"}, {IP: "fd00::10"}},
			wantHostIP: "192.168.1.10",
		},
		{
			name:    "no host IPs: no hostIP",
			pod:     testPod(withContainers(a)),
			rt:      &podRuntime{},
			hostIPs: nil,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := statusIn(tc.pod, tc.rt)
			in.HostIPs = tc.hostIPs
			st := generatePodStatus(in)
			if st.PodIP != tc.wantPodIP {
				t.Errorf("podIP = %q, want %q", st.PodIP, tc.wantPodIP)
			}
			if diff := cmp.Diff(tc.wantPodIPs, st.PodIPs); diff != "" {
				t.Errorf("podIPs (-want +got):\n%s", diff)
			}
			if st.HostIP != tc.wantHostIP {
				t.Errorf("hostIP = %q, want %q", st.HostIP, tc.wantHostIP)
			}
			if len(st.HostIPs) != len(tc.hostIPs) {
				t.Errorf("hostIPs = %v, want %v", st.HostIPs, tc.hostIPs)
			}
		})
	}
}

func TestGeneratePodStatusKeepsStartTimePhaseAndQOS(t *testing.T) {
	a := ctr("a")
	start := mt(testT0.Add(-2 * time.Hour))

	t.Run("startTime kept", func(t *testing.T) {
		pod := testPod(withContainers(a))
		pod.Status.StartTime = &start
		st := generatePodStatus(statusIn(pod, &podRuntime{}))
		if st.StartTime == nil || !st.StartTime.Time.Equal(start.Time) {
			t.Errorf("startTime = %v, want %v", st.StartTime, start)
		}
	})
	t.Run("startTime set to now when absent", func(t *testing.T) {
		st := generatePodStatus(statusIn(testPod(withContainers(a)), &podRuntime{}))
		if st.StartTime == nil || !st.StartTime.Time.Equal(statusNow) {
			t.Errorf("startTime = %v, want %v", st.StartTime, statusNow)
		}
	})
	t.Run("terminal old phase kept", func(t *testing.T) {
		for _, phase := range []v1.PodPhase{v1.PodSucceeded, v1.PodFailed} {
			pod := testPod(withContainers(a))
			pod.Status.Phase = phase
			// The runtime would say Running.
			st := generatePodStatus(statusIn(pod, rtOf(sbs(sandbox("s1", 0, true)), running(a, "c-a", "s1"))))
			if st.Phase != phase {
				t.Errorf("old phase %s: phase = %s", phase, st.Phase)
			}
		}
	})
	t.Run("non-terminal old phase recomputed", func(t *testing.T) {
		pod := testPod(withContainers(a))
		pod.Status.Phase = v1.PodPending
		st := generatePodStatus(statusIn(pod, rtOf(sbs(sandbox("s1", 0, true)), running(a, "c-a", "s1"))))
		if st.Phase != v1.PodRunning {
			t.Errorf("phase = %s, want Running", st.Phase)
		}
	})
	t.Run("qosClass and observedGeneration", func(t *testing.T) {
		pod := testPod(withContainers(a))
		pod.Status.QOSClass = v1.PodQOSGuaranteed
		pod.Generation = 7
		st := generatePodStatus(statusIn(pod, &podRuntime{}))
		if st.QOSClass != v1.PodQOSGuaranteed {
			t.Errorf("qosClass = %q", st.QOSClass)
		}
		if st.ObservedGeneration != 7 {
			t.Errorf("observedGeneration = %d, want 7", st.ObservedGeneration)
		}
	})
	t.Run("input pod is not modified", func(t *testing.T) {
		pod := testPod(withContainers(a))
		pod.Status.Conditions = []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionTrue}}
		before := pod.DeepCopy()
		generatePodStatus(statusIn(pod, rtOf(sbs(sandbox("s1", 0, true)), running(a, "c-a", "s1"))))
		if diff := cmp.Diff(before, pod); diff != "" {
			t.Errorf("pod modified (-before +after):\n%s", diff)
		}
	})
}
