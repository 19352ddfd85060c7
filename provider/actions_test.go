package provider

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
)

// fakeBackoff answers InBackoff from a fixed table and records the questions asked.
type fakeBackoff struct {
	entries map[string]fakeBackoffEntry
	calls   []fakeBackoffCall
}

type fakeBackoffEntry struct {
	period, remaining time.Duration
}

type fakeBackoffCall struct {
	Key        string
	FinishedAt time.Time
}

func (f *fakeBackoff) InBackoff(key string, finishedAt time.Time) (time.Duration, time.Duration, bool) {
	f.calls = append(f.calls, fakeBackoffCall{Key: key, FinishedAt: finishedAt})
	e, ok := f.entries[key]
	return e.period, e.remaining, ok
}

// inBackoffFor puts the named containers of the test pod in back-off.
func inBackoffFor(entries map[string]fakeBackoffEntry) *fakeBackoff {
	f := &fakeBackoff{entries: map[string]fakeBackoffEntry{}}
	for name, e := range entries {
		f.entries[fmt.Sprintf("%s_%s_%s_%s", testPodName, testPodNS, testPodUID, name)] = e
	}
	return f
}

func crashLoop(name string, period time.Duration) waitingReason {
	return waitingReason{
		Reason:  "CrashLoopBackOff",
		Message: fmt.Sprintf("back-off %s restarting failed container=%s pod=web_default(uid-1)", period, name),
	}
}

var actionsCmpOpts = []cmp.Option{cmpopts.EquateEmpty()}

func TestComputePodActions(t *testing.T) {
	a, b := ctr("a"), ctr("b")
	i1, i2 := ctr("i1"), ctr("i2")
	side := sidecarCtr("side")
	s1 := sandbox("s1", 0, true)
	s1dead := sandbox("s1", 0, false)

	cases := []struct {
		name string
		pod  *v1.Pod
		rt   *podRuntime
		bo   *fakeBackoff
		want podActions
		// bug, when set, says the expectation is the kubelet's and the code does otherwise.
		bug string
	}{
		// --- first start ---
		{
			name: "first start: no sandbox, every container to start",
			pod:  testPod(withContainers(a, b)),
			rt:   &podRuntime{},
			want: podActions{CreateSandbox: true, InitToStart: -1, ContainersToStart: []int{0, 1}},
		},
		{
			name: "first start: nil runtime state",
			pod:  testPod(withContainers(a, b)),
			rt:   nil,
			want: podActions{CreateSandbox: true, InitToStart: -1, ContainersToStart: []int{0, 1}},
		},
		{
			name: "first start under Never: containers still start",
			pod:  testPod(withContainers(a), withRestart(v1.RestartPolicyNever)),
			rt:   &podRuntime{},
			want: podActions{CreateSandbox: true, InitToStart: -1, ContainersToStart: []int{0}},
		},
		{
			name: "first start with init containers: the first init container only",
			pod:  testPod(withInit(i1, i2), withContainers(a, b)),
			rt:   &podRuntime{},
			want: podActions{CreateSandbox: true, InitToStart: 0},
		},

		// --- init containers ---
		{
			name: "init: first init container running, wait",
			pod:  testPod(withInit(i1, i2), withContainers(a)),
			rt:   rtOf(sbs(s1), running(i1, "c-i1", "s1")),
			want: podActions{SandboxID: "s1", InitToStart: -1},
		},
		{
			name: "init: next init container once the previous exited 0",
			pod:  testPod(withInit(i1, i2), withContainers(a)),
			rt:   rtOf(sbs(s1), exited(i1, "c-i1", "s1", 0)),
			want: podActions{SandboxID: "s1", InitToStart: 1},
		},
		{
			name: "init: last init container running, regular containers wait",
			pod:  testPod(withInit(i1, i2), withContainers(a)),
			rt:   rtOf(sbs(s1), exited(i1, "c-i1", "s1", 0), running(i2, "c-i2", "s1")),
			want: podActions{SandboxID: "s1", InitToStart: -1},
		},
		{
			name: "init: regular containers start only after every init container succeeded",
			pod:  testPod(withInit(i1, i2), withContainers(a, b)),
			rt:   rtOf(sbs(s1), exited(i1, "c-i1", "s1", 0), exited(i2, "c-i2", "s1", 0)),
			want: podActions{SandboxID: "s1", InitToStart: -1, ContainersToStart: []int{0, 1}},
		},
		{
			name: "init: failed init container under Never, nothing started",
			pod:  testPod(withInit(i1, i2), withContainers(a), withRestart(v1.RestartPolicyNever)),
			rt:   rtOf(sbs(s1), exited(i1, "c-i1", "s1", 1)),
			want: podActions{SandboxID: "s1", InitToStart: -1},
		},
		{
			name: "init: failed second init container under Never, nothing started",
			pod:  testPod(withInit(i1, i2), withContainers(a), withRestart(v1.RestartPolicyNever)),
			rt:   rtOf(sbs(s1), exited(i1, "c-i1", "s1", 0), exited(i2, "c-i2", "s1", 2)),
			want: podActions{SandboxID: "s1", InitToStart: -1},
		},
		{
			name: "init: failed init container under OnFailure is restarted",
			pod:  testPod(withInit(i1, i2), withContainers(a), withRestart(v1.RestartPolicyOnFailure)),
			rt:   rtOf(sbs(s1), exited(i1, "c-i1", "s1", 0), exited(i2, "c-i2", "s1", 1)),
			want: podActions{SandboxID: "s1", InitToStart: 1},
		},
		{
			name: "init: failed init container under Always is restarted",
			pod:  testPod(withInit(i1), withContainers(a)),
			rt:   rtOf(sbs(s1), exited(i1, "c-i1", "s1", 137)),
			want: podActions{SandboxID: "s1", InitToStart: 0},
		},
		{
			name: "init: failed init container in crash-loop back-off",
			pod:  testPod(withInit(i1), withContainers(a), withRestart(v1.RestartPolicyOnFailure)),
			rt:   rtOf(sbs(s1), exited(i1, "c-i1", "s1", 1, restarts(2))),
			bo:   inBackoffFor(map[string]fakeBackoffEntry{"i1": {period: 40 * time.Second, remaining: 25 * time.Second}}),
			want: podActions{
				SandboxID:   "s1",
				InitToStart: -1,
				Backoff:     map[string]waitingReason{"i1": crashLoop("i1", 40*time.Second)},
				NextSync:    25 * time.Second,
			},
		},
		{
			name: "init: back-off of another container does not hold the init container",
			pod:  testPod(withInit(i1), withContainers(a), withRestart(v1.RestartPolicyOnFailure)),
			rt:   rtOf(sbs(s1), exited(i1, "c-i1", "s1", 1)),
			bo:   inBackoffFor(map[string]fakeBackoffEntry{"a": {period: 10 * time.Second, remaining: 5 * time.Second}}),
			want: podActions{SandboxID: "s1", InitToStart: 0},
		},
		{
			name: "init: created but never started init container is replaced",
			pod:  testPod(withInit(i1), withContainers(a)),
			rt:   rtOf(sbs(s1), created(i1, "c-i1", "s1")),
			want: podActions{
				SandboxID:        "s1",
				InitToStart:      0,
				ContainersToKill: []killTarget{{ID: "c-i1", Name: "i1", Reason: "container not started"}},
			},
		},
		{
			name: "init: regular containers already ran, garbage-collected init containers are not re-run",
			pod:  testPod(withInit(i1, i2), withContainers(a)),
			rt:   rtOf(sbs(s1), running(a, "c-a", "s1")),
			want: podActions{SandboxID: "s1", InitToStart: -1},
		},
		{
			name: "init: a successful init container is never re-run",
			pod:  testPod(withInit(i1), withContainers(a)),
			rt:   rtOf(sbs(s1), exited(i1, "c-i1", "s1", 0), running(a, "c-a", "s1")),
			want: podActions{SandboxID: "s1", InitToStart: -1},
		},

		// --- regular containers ---
		{
			name: "running container with matching hash: nothing to do",
			pod:  testPod(withContainers(a, b)),
			rt:   rtOf(sbs(s1), running(a, "c-a", "s1"), running(b, "c-b", "s1")),
			want: podActions{SandboxID: "s1", InitToStart: -1},
		},
		{
			name: "running container whose image was updated: kill and start",
			pod:  testPod(withContainers(ctrImage("a", "a:2.0"), b)),
			rt:   rtOf(sbs(s1), running(a, "c-a", "s1"), running(b, "c-b", "s1")),
			want: podActions{
				SandboxID:         "s1",
				InitToStart:       -1,
				ContainersToKill:  []killTarget{{ID: "c-a", Name: "a", Reason: "definition changed"}},
				ContainersToStart: []int{0},
			},
		},
		{
			name: "running container: a change outside the hash (command) does not restart it",
			pod: testPod(withContainers(func() v1.Container {
				c := ctr("a")
				c.Command = []string{"/bin/other"}
				return c
			}())),
			rt:   rtOf(sbs(s1), running(a, "c-a", "s1")),
			want: podActions{SandboxID: "s1", InitToStart: -1},
		},
		{
			name: "exited container whose image was updated is restarted without a kill",
			pod:  testPod(withContainers(ctrImage("a", "a:2.0"))),
			rt:   rtOf(sbs(s1), exited(a, "c-a", "s1", 0)),
			want: podActions{SandboxID: "s1", InitToStart: -1, ContainersToStart: []int{0}},
		},
		{
			name: "missing container in a live sandbox is started",
			pod:  testPod(withContainers(a, b)),
			rt:   rtOf(sbs(s1), running(a, "c-a", "s1")),
			want: podActions{SandboxID: "s1", InitToStart: -1, ContainersToStart: []int{1}},
		},
		{
			name: "Always: exited 0 is restarted",
			pod:  testPod(withContainers(a)),
			rt:   rtOf(sbs(s1), exited(a, "c-a", "s1", 0)),
			want: podActions{SandboxID: "s1", InitToStart: -1, ContainersToStart: []int{0}},
		},
		{
			name: "Always: exited 1 is restarted",
			pod:  testPod(withContainers(a)),
			rt:   rtOf(sbs(s1), exited(a, "c-a", "s1", 1)),
			want: podActions{SandboxID: "s1", InitToStart: -1, ContainersToStart: []int{0}},
		},
		{
			name: "OnFailure: exited 0 stays down",
			pod:  testPod(withContainers(a), withRestart(v1.RestartPolicyOnFailure)),
			rt:   rtOf(sbs(s1), exited(a, "c-a", "s1", 0)),
			want: podActions{SandboxID: "s1", InitToStart: -1},
		},
		{
			name: "OnFailure: exited 1 is restarted",
			pod:  testPod(withContainers(a), withRestart(v1.RestartPolicyOnFailure)),
			rt:   rtOf(sbs(s1), exited(a, "c-a", "s1", 1)),
			want: podActions{SandboxID: "s1", InitToStart: -1, ContainersToStart: []int{0}},
		},
		{
			name: "OnFailure: only the failed one of two is restarted",
			pod:  testPod(withContainers(a, b), withRestart(v1.RestartPolicyOnFailure)),
			rt:   rtOf(sbs(s1), exited(a, "c-a", "s1", 0), exited(b, "c-b", "s1", 3)),
			want: podActions{SandboxID: "s1", InitToStart: -1, ContainersToStart: []int{1}},
		},
		{
			name: "OnFailure: OOMKilled (137) is restarted",
			pod:  testPod(withContainers(a), withRestart(v1.RestartPolicyOnFailure)),
			rt:   rtOf(sbs(s1), exited(a, "c-a", "s1", 137, reason("OOMKilled", ""))),
			want: podActions{SandboxID: "s1", InitToStart: -1, ContainersToStart: []int{0}},
		},
		{
			name: "Never: OOMKilled (137) stays down",
			pod:  testPod(withContainers(a), withRestart(v1.RestartPolicyNever)),
			rt:   rtOf(sbs(s1), exited(a, "c-a", "s1", 137, reason("OOMKilled", ""))),
			want: podActions{SandboxID: "s1", InitToStart: -1},
		},
		{
			name: "Never: exited 0 stays down",
			pod:  testPod(withContainers(a), withRestart(v1.RestartPolicyNever)),
			rt:   rtOf(sbs(s1), exited(a, "c-a", "s1", 0)),
			want: podActions{SandboxID: "s1", InitToStart: -1},
		},
		{
			name: "Never: exited 1 stays down",
			pod:  testPod(withContainers(a), withRestart(v1.RestartPolicyNever)),
			rt:   rtOf(sbs(s1), exited(a, "c-a", "s1", 1)),
			want: podActions{SandboxID: "s1", InitToStart: -1},
		},
		{
			name: "empty pod restartPolicy means Always",
			pod:  testPod(withContainers(a), withRestart("")),
			rt:   rtOf(sbs(s1), exited(a, "c-a", "s1", 0)),
			want: podActions{SandboxID: "s1", InitToStart: -1, ContainersToStart: []int{0}},
		},

		// --- container-level restart policy and rules ---
		{
			name: "container Never overrides pod Always",
			pod:  testPod(withContainers(withPolicy(a, v1.ContainerRestartPolicyNever))),
			rt:   rtOf(sbs(s1), exited(a, "c-a", "s1", 1)),
			want: podActions{SandboxID: "s1", InitToStart: -1},
		},
		{
			name: "container OnFailure overrides pod Never: exit 1 restarts",
			pod:  testPod(withContainers(withPolicy(a, v1.ContainerRestartPolicyOnFailure)), withRestart(v1.RestartPolicyNever)),
			rt:   rtOf(sbs(s1), exited(a, "c-a", "s1", 1)),
			want: podActions{SandboxID: "s1", InitToStart: -1, ContainersToStart: []int{0}},
		},
		{
			name: "container OnFailure overrides pod Never: exit 0 stays down",
			pod:  testPod(withContainers(withPolicy(a, v1.ContainerRestartPolicyOnFailure)), withRestart(v1.RestartPolicyNever)),
			rt:   rtOf(sbs(s1), exited(a, "c-a", "s1", 0)),
			want: podActions{SandboxID: "s1", InitToStart: -1},
		},
		{
			name: "container Always overrides pod Never",
			pod:  testPod(withContainers(withPolicy(a, v1.ContainerRestartPolicyAlways)), withRestart(v1.RestartPolicyNever)),
			rt:   rtOf(sbs(s1), exited(a, "c-a", "s1", 0)),
			want: podActions{SandboxID: "s1", InitToStart: -1, ContainersToStart: []int{0}},
		},
		{
			name: "restart rule In [42] matches exit 42: restart despite container Never",
			pod: testPod(withContainers(withRules(a, v1.ContainerRestartPolicyNever,
				restartRule(v1.ContainerRestartRuleActionRestart, v1.ContainerRestartRuleOnExitCodesOpIn, 42))), withRestart(v1.RestartPolicyNever)),
			rt:   rtOf(sbs(s1), exited(a, "c-a", "s1", 42)),
			want: podActions{SandboxID: "s1", InitToStart: -1, ContainersToStart: []int{0}},
		},
		{
			name: "restart rule In [42] does not match exit 43: container Never wins",
			pod: testPod(withContainers(withRules(a, v1.ContainerRestartPolicyNever,
				restartRule(v1.ContainerRestartRuleActionRestart, v1.ContainerRestartRuleOnExitCodesOpIn, 42))), withRestart(v1.RestartPolicyNever)),
			rt:   rtOf(sbs(s1), exited(a, "c-a", "s1", 43)),
			want: podActions{SandboxID: "s1", InitToStart: -1},
		},
		{
			name: "restart rule NotIn [0 1] matches exit 2",
			pod: testPod(withContainers(withRules(a, v1.ContainerRestartPolicyNever,
				restartRule(v1.ContainerRestartRuleActionRestart, v1.ContainerRestartRuleOnExitCodesOpNotIn, 0, 1)))),
			rt:   rtOf(sbs(s1), exited(a, "c-a", "s1", 2)),
			want: podActions{SandboxID: "s1", InitToStart: -1, ContainersToStart: []int{0}},
		},
		{
			name: "restart rule NotIn [0 1] does not match exit 1",
			pod: testPod(withContainers(withRules(a, v1.ContainerRestartPolicyNever,
				restartRule(v1.ContainerRestartRuleActionRestart, v1.ContainerRestartRuleOnExitCodesOpNotIn, 0, 1)))),
			rt:   rtOf(sbs(s1), exited(a, "c-a", "s1", 1)),
			want: podActions{SandboxID: "s1", InitToStart: -1},
		},
		{
			name: "restart rules without a container restart policy are not evaluated",
			pod: testPod(withContainers(func() v1.Container {
				c := ctr("a")
				c.RestartPolicyRules = []v1.ContainerRestartRule{restartRule(v1.ContainerRestartRuleActionRestart, v1.ContainerRestartRuleOnExitCodesOpIn, 42)}
				return c
			}()), withRestart(v1.RestartPolicyNever)),
			rt:   rtOf(sbs(s1), exited(a, "c-a", "s1", 42)),
			want: podActions{SandboxID: "s1", InitToStart: -1},
		},

		// --- crash-loop back-off ---
		{
			name: "crash-loop back-off: wait, with the kubelet's reason and message",
			pod:  testPod(withContainers(a)),
			rt:   rtOf(sbs(s1), exited(a, "c-a", "s1", 1, restarts(3))),
			bo:   inBackoffFor(map[string]fakeBackoffEntry{"a": {period: 80 * time.Second, remaining: 61 * time.Second}}),
			want: podActions{
				SandboxID:   "s1",
				InitToStart: -1,
				Backoff:     map[string]waitingReason{"a": crashLoop("a", 80*time.Second)},
				NextSync:    61 * time.Second,
			},
		},
		{
			name: "crash-loop back-off: two containers, next sync at the earliest end",
			pod:  testPod(withContainers(a, b)),
			rt:   rtOf(sbs(s1), exited(a, "c-a", "s1", 1), exited(b, "c-b", "s1", 2)),
			bo: inBackoffFor(map[string]fakeBackoffEntry{
				"a": {period: 5 * time.Minute, remaining: 4 * time.Minute},
				"b": {period: 20 * time.Second, remaining: 3 * time.Second},
			}),
			want: podActions{
				SandboxID:   "s1",
				InitToStart: -1,
				Backoff:     map[string]waitingReason{"a": crashLoop("a", 5*time.Minute), "b": crashLoop("b", 20*time.Second)},
				NextSync:    3 * time.Second,
			},
		},
		{
			name: "crash-loop back-off of one container does not hold the other",
			pod:  testPod(withContainers(a, b)),
			rt:   rtOf(sbs(s1), exited(a, "c-a", "s1", 1), exited(b, "c-b", "s1", 0)),
			bo:   inBackoffFor(map[string]fakeBackoffEntry{"a": {period: 10 * time.Second, remaining: 10 * time.Second}}),
			want: podActions{
				SandboxID:         "s1",
				InitToStart:       -1,
				ContainersToStart: []int{1},
				Backoff:           map[string]waitingReason{"a": crashLoop("a", 10*time.Second)},
				NextSync:          10 * time.Second,
			},
		},
		{
			name: "back-off is not consulted for a container that stays down",
			pod:  testPod(withContainers(a), withRestart(v1.RestartPolicyNever)),
			rt:   rtOf(sbs(s1), exited(a, "c-a", "s1", 1)),
			bo:   inBackoffFor(map[string]fakeBackoffEntry{"a": {period: 10 * time.Second, remaining: 10 * time.Second}}),
			want: podActions{SandboxID: "s1", InitToStart: -1},
		},

		// --- unusable instances ---
		{
			name: "created but not started container: kill and start",
			pod:  testPod(withContainers(a)),
			rt:   rtOf(sbs(s1), created(a, "c-a", "s1")),
			want: podActions{
				SandboxID:         "s1",
				InitToStart:       -1,
				ContainersToKill:  []killTarget{{ID: "c-a", Name: "a", Reason: "container not started"}},
				ContainersToStart: []int{0},
			},
		},
		{
			name: "created but not started container under Never: still replaced",
			pod:  testPod(withContainers(a), withRestart(v1.RestartPolicyNever)),
			rt:   rtOf(sbs(s1), created(a, "c-a", "s1")),
			want: podActions{
				SandboxID:         "s1",
				InitToStart:       -1,
				ContainersToKill:  []killTarget{{ID: "c-a", Name: "a", Reason: "container not started"}},
				ContainersToStart: []int{0},
			},
		},
		{
			name: "container in unknown state: kill and start",
			pod:  testPod(withContainers(a)),
			rt:   rtOf(sbs(s1), unknownState(a, "c-a", "s1")),
			want: podActions{
				SandboxID:         "s1",
				InitToStart:       -1,
				ContainersToKill:  []killTarget{{ID: "c-a", Name: "a", Reason: "container not started"}},
				ContainersToStart: []int{0},
			},
		},

		// --- dead sandbox ---
		{
			name: "sandbox dead under Always: kill pod, new sandbox with attempt+1, start all",
			pod:  testPod(withContainers(a, b)),
			rt:   rtOf(sbs(sandbox("s3", 2, false)), exited(a, "c-a", "s3", 137), running(b, "c-b", "s3")),
			want: podActions{KillPod: true, CreateSandbox: true, SandboxAttempt: 3, InitToStart: -1, ContainersToStart: []int{0, 1}},
		},
		{
			name: "sandbox dead under Never with containers that ran: kill pod, no new sandbox",
			pod:  testPod(withContainers(a), withRestart(v1.RestartPolicyNever)),
			rt:   rtOf(sbs(s1dead), exited(a, "c-a", "s1", 0)),
			want: podActions{KillPod: true, SandboxAttempt: 1, InitToStart: -1},
		},
		{
			name: "sandbox dead under Never before any container: retry the sandbox",
			pod:  testPod(withContainers(a), withRestart(v1.RestartPolicyNever)),
			rt:   rtOf(sbs(s1dead)),
			want: podActions{KillPod: true, CreateSandbox: true, SandboxAttempt: 1, InitToStart: -1, ContainersToStart: []int{0}},
		},
		{
			name: "sandbox dead under OnFailure: only the failed container is started again",
			pod:  testPod(withContainers(a, b), withRestart(v1.RestartPolicyOnFailure)),
			rt:   rtOf(sbs(s1dead), exited(a, "c-a", "s1", 0), exited(b, "c-b", "s1", 1)),
			want: podActions{KillPod: true, CreateSandbox: true, SandboxAttempt: 1, InitToStart: -1, ContainersToStart: []int{1}},
		},
		{
			name: "sandbox dead under OnFailure, every container succeeded: kill pod only",
			pod:  testPod(withContainers(a, b), withRestart(v1.RestartPolicyOnFailure)),
			rt:   rtOf(sbs(s1dead), exited(a, "c-a", "s1", 0), exited(b, "c-b", "s1", 0)),
			want: podActions{KillPod: true, SandboxAttempt: 1, InitToStart: -1},
		},
		{
			name: "sandbox dead with init containers: new sandbox starts over with the first init container",
			pod:  testPod(withInit(i1, i2), withContainers(a)),
			rt:   rtOf(sbs(s1dead), exited(i1, "c-i1", "s1", 0), exited(i2, "c-i2", "s1", 0), exited(a, "c-a", "s1", 1)),
			want: podActions{KillPod: true, CreateSandbox: true, SandboxAttempt: 1, InitToStart: 0},
		},
		{
			name: "newest sandbox dead while an older one is ready: the newest decides",
			pod:  testPod(withContainers(a)),
			rt:   rtOf(sbs(sandbox("s1", 0, true), sandbox("s2", 1, false)), running(a, "c-a", "s1")),
			want: podActions{KillPod: true, CreateSandbox: true, SandboxAttempt: 2, InitToStart: -1, ContainersToStart: []int{0}},
		},
		{
			name: "back-off is not applied when the sandbox is re-created",
			pod:  testPod(withContainers(a)),
			rt:   rtOf(sbs(s1dead), exited(a, "c-a", "s1", 1)),
			bo:   inBackoffFor(map[string]fakeBackoffEntry{"a": {period: 10 * time.Second, remaining: 10 * time.Second}}),
			want: podActions{KillPod: true, CreateSandbox: true, SandboxAttempt: 1, InitToStart: -1, ContainersToStart: []int{0}},
		},

		// --- leftovers of older sandboxes ---
		{
			name: "running containers of an older sandbox are killed",
			pod:  testPod(withContainers(a, b)),
			rt: rtOf(sbs(sandbox("s2", 1, true), sandbox("s1", 0, false)),
				running(a, "c-a-old", "s1"),
				exited(b, "c-b-old", "s1", 1),
			),
			want: podActions{
				SandboxID:         "s2",
				InitToStart:       -1,
				ContainersToKill:  []killTarget{{ID: "c-a-old", Name: "a", Reason: "sandbox changed"}},
				ContainersToStart: []int{1},
			},
		},
		{
			name: "exited containers of an older sandbox are left alone",
			pod:  testPod(withContainers(a)),
			rt: rtOf(sbs(sandbox("s2", 1, true), sandbox("s1", 0, false)),
				running(a, "c-a-new", "s2", restarts(1)),
				exited(a, "c-a-old", "s1", 1),
			),
			want: podActions{SandboxID: "s2", InitToStart: -1},
		},
		{
			name: "the newest instance decides, not an older one",
			pod:  testPod(withContainers(a)),
			rt: rtOf(sbs(s1),
				exited(a, "c-a-0", "s1", 1),
				running(a, "c-a-1", "s1", restarts(1)),
			),
			want: podActions{SandboxID: "s1", InitToStart: -1},
		},

		{
			name: "regular containers done for good: running sidecars are stopped with the pod",
			pod:  testPod(withRestart(v1.RestartPolicyNever), withInit(side), withContainers(a)),
			rt:   rtOf(sbs(s1), running(side, "c-side", "s1"), exited(a, "c-a", "s1", 0)),
			want: podActions{SandboxID: "s1", InitToStart: -1, KillPod: true},
		},
		{
			name: "a regular container that will restart keeps the sidecars",
			pod:  testPod(withRestart(v1.RestartPolicyOnFailure), withInit(side), withContainers(a)),
			rt:   rtOf(sbs(s1), running(side, "c-side", "s1"), exited(a, "c-a", "s1", 1)),
			want: podActions{SandboxID: "s1", InitToStart: -1, ContainersToStart: []int{0}},
		},

		// --- kubelet behaviour not reproduced (see the report) ---
		{
			name: "sidecar running: the next init container starts",
			pod:  testPod(withInit(side, i1), withContainers(a)),
			rt:   rtOf(sbs(s1), running(side, "c-side", "s1")),
			want: podActions{SandboxID: "s1", InitToStart: 1},
			bug:  "a running restartable init container (sidecar) blocks the init sequence: nextInit returns on any RUNNING init container",
		},
		{
			name: "sidecar running and init containers done: regular containers start",
			pod:  testPod(withInit(side, i1), withContainers(a)),
			rt:   rtOf(sbs(s1), running(side, "c-side", "s1"), exited(i1, "c-i1", "s1", 0)),
			want: podActions{SandboxID: "s1", InitToStart: -1, ContainersToStart: []int{0}},
			bug:  "initDone requires every init container, sidecars included, to have exited 0, so a pod with a sidecar never starts its regular containers",
		},
		{
			name: "sidecar exited after initialization: restarted",
			pod:  testPod(withInit(side), withContainers(a)),
			rt:   rtOf(sbs(s1), exited(side, "c-side", "s1", 0), running(a, "c-a", "s1")),
			want: podActions{SandboxID: "s1", InitToStart: -1, SidecarsToStart: []int{0}},
			bug:  "exited sidecars are never restarted (exit 0 is taken as a completed init container; once regular containers exist init containers are not looked at)",
		},
		{
			name: "new sandbox: a regular container of the previous sandbox does not mark the pod initialized",
			pod:  testPod(withInit(i1, i2), withContainers(a)),
			rt: rtOf(sbs(sandbox("s2", 1, true), sandbox("s1", 0, false)),
				running(i1, "c-i1-1", "s2", restarts(1)),
				exited(i1, "c-i1-0", "s1", 0),
				exited(i2, "c-i2-0", "s1", 0),
				exited(a, "c-a-0", "s1", 1),
			),
			want: podActions{SandboxID: "s2", InitToStart: -1},
			bug:  "initDone counts regular containers of any sandbox; after a sandbox re-creation the regular containers start while the first init container still runs, and the later init containers are skipped (kubelet: HasAnyActiveRegularContainerStarted, current sandbox only)",
		},
		{
			name: "init container with its own OnFailure policy in a Never pod is restarted",
			pod:  testPod(withInit(withPolicy(i1, v1.ContainerRestartPolicyOnFailure)), withContainers(a), withRestart(v1.RestartPolicyNever)),
			rt:   rtOf(sbs(s1), exited(i1, "c-i1", "s1", 1)),
			want: podActions{SandboxID: "s1", InitToStart: 0},
			bug:  "nextInit looks only at the pod's restartPolicy for failed init containers, not the container's restartPolicy/restartPolicyRules (status.PodPhase does, so the pod stays Pending forever)",
		},
		{
			name: "init container with restart rule matching its exit code in a Never pod is restarted",
			pod: testPod(withInit(withRules(i1, v1.ContainerRestartPolicyNever,
				restartRule(v1.ContainerRestartRuleActionRestart, v1.ContainerRestartRuleOnExitCodesOpIn, 42))), withContainers(a), withRestart(v1.RestartPolicyNever)),
			rt:   rtOf(sbs(s1), exited(i1, "c-i1", "s1", 42)),
			want: podActions{SandboxID: "s1", InitToStart: 0},
			bug:  "nextInit ignores init containers' restartPolicyRules",
		},
		{
			name: "init container with its own Never policy in an Always pod is not restarted",
			pod:  testPod(withInit(withPolicy(i1, v1.ContainerRestartPolicyNever)), withContainers(a)),
			rt:   rtOf(sbs(s1), exited(i1, "c-i1", "s1", 1)),
			want: podActions{SandboxID: "s1", InitToStart: -1},
			bug:  "nextInit restarts a failed init container whose own restartPolicy is Never (kubelet: the pod fails)",
		},
		{
			name: "sandbox dead with init containers, every regular container done for good: no new sandbox",
			pod:  testPod(withInit(i1), withContainers(a), withRestart(v1.RestartPolicyOnFailure)),
			rt:   rtOf(sbs(s1dead), exited(i1, "c-i1", "s1", 0), exited(a, "c-a", "s1", 0)),
			want: podActions{KillPod: true, SandboxAttempt: 1, InitToStart: -1},
			bug:  "sandboxActions creates a sandbox and re-runs init containers for a pod with init containers even when no regular container is to start (kubelet: HasAnyRegularContainerCreated → no sandbox)",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var bo restartBackoff
			if tc.bo != nil {
				bo = tc.bo
			}
			got := computePodActions(tc.pod, tc.rt, bo, nil)
			diff := cmp.Diff(tc.want, got, actionsCmpOpts...)
			if tc.bug != "" {
				knownBug(t, tc.bug, diff)
				return
			}
			if diff != "" {
				t.Errorf("computePodActions (-want +got):\n%s", diff)
			}
		})
	}
}

// A nil back-off (no restart has happened yet) never delays a restart.
func TestComputePodActionsNilBackoff(t *testing.T) {
	a := ctr("a")
	got := computePodActions(testPod(withContainers(a)), rtOf(sbs(sandbox("s1", 0, true)), exited(a, "c-a", "s1", 1)), nil, nil)
	if diff := cmp.Diff([]int{0}, got.ContainersToStart); diff != "" {
		t.Errorf("ContainersToStart (-want +got):\n%s", diff)
	}
	if len(got.Backoff) != 0 || got.NextSync != 0 {
		t.Errorf("Backoff = %v, NextSync = %v; want none", got.Backoff, got.NextSync)
	}
}

// The back-off is asked about each restartable exited container, with the kubelet-like key and
// the instance's finish time.
func TestComputePodActionsBackoffQuestions(t *testing.T) {
	a, b, c := ctr("a"), ctr("b"), ctr("c")
	pod := testPod(withContainers(a, b, c), withRestart(v1.RestartPolicyOnFailure))
	ea := exited(a, "c-a", "s1", 1, restarts(2))
	eb := exited(b, "c-b", "s1", 0) // OnFailure + exit 0: stays down, no question
	rc := running(c, "c-c", "s1")
	bo := &fakeBackoff{}
	computePodActions(pod, rtOf(sbs(sandbox("s1", 0, true)), ea, eb, rc), bo, nil)
	want := []fakeBackoffCall{{Key: "web_default_uid-1_a", FinishedAt: ea.FinishedAt}}
	if diff := cmp.Diff(want, bo.calls); diff != "" {
		t.Errorf("back-off questions (-want +got):\n%s", diff)
	}
}

func TestBackoffKeyAndMessage(t *testing.T) {
	pod := testPod()
	if got, want := backoffKey(pod, "app"), "web_default_uid-1_app"; got != want {
		t.Errorf("backoffKey = %q, want %q", got, want)
	}
	cases := []struct {
		wait time.Duration
		want string
	}{
		{10 * time.Second, "back-off 10s restarting failed container=app pod=web_default(uid-1)"},
		{2*time.Minute + 40*time.Second, "back-off 2m40s restarting failed container=app pod=web_default(uid-1)"},
		{5 * time.Minute, "back-off 5m0s restarting failed container=app pod=web_default(uid-1)"},
	}
	for _, tc := range cases {
		if got := crashLoopMessage(pod, "app", tc.wait); got != tc.want {
			t.Errorf("crashLoopMessage(%v) = %q, want %q", tc.wait, got, tc.want)
		}
	}
}

func TestMinPositive(t *testing.T) {
	cases := []struct{ a, b, want time.Duration }{
		{0, 0, 0},
		{0, 5, 5},
		{5, 0, 5},
		{3, 5, 3},
		{5, 3, 3},
		{-1, 4, 4},
		{4, -1, 4},
	}
	for _, tc := range cases {
		if got := minPositive(tc.a, tc.b); got != tc.want {
			t.Errorf("minPositive(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestChangesRuntime(t *testing.T) {
	cases := []struct {
		name string
		a    podActions
		want bool
	}{
		{"nothing", podActions{InitToStart: -1, SandboxID: "s1"}, false},
		{"back-off only", podActions{InitToStart: -1, Backoff: map[string]waitingReason{"a": {}}}, false},
		{"kill pod", podActions{InitToStart: -1, KillPod: true}, true},
		{"create sandbox", podActions{InitToStart: -1, CreateSandbox: true}, true},
		{"init to start", podActions{InitToStart: 0}, true},
		{"container to start", podActions{InitToStart: -1, ContainersToStart: []int{0}}, true},
		{"container to kill", podActions{InitToStart: -1, ContainersToKill: []killTarget{{ID: "x"}}}, true},
	}
	for _, tc := range cases {
		if got := tc.a.changesRuntime(); got != tc.want {
			t.Errorf("%s: changesRuntime() = %v, want %v", tc.name, got, tc.want)
		}
	}
}
