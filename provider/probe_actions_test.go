package provider

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/vk-cri/vk-cri/provider/prober"
)

// fakeProbes holds verdicts by kind and container ID.
type fakeProbes map[prober.Kind]map[string]prober.Result

func (f fakeProbes) Result(k prober.Kind, id string) (prober.Result, bool) {
	r, ok := f[k][id]
	return r, ok
}

func withProbeGrace(c v1.Container, live, startup *int64) v1.Container {
	c.LivenessProbe = &v1.Probe{TerminationGracePeriodSeconds: live}
	c.StartupProbe = &v1.Probe{TerminationGracePeriodSeconds: startup}
	return c
}

func TestComputePodActionsProbes(t *testing.T) {
	a := ctr("a")
	side := sidecarCtr("side")
	side.StartupProbe = &v1.Probe{}
	i2 := ctr("i2")
	s1 := sandbox("s1", 0, true)
	graced := withProbeGrace(ctr("a"), ptrTo(int64(7)), ptrTo(int64(9)))
	podGrace := func(p *v1.Pod) { p.Spec.TerminationGracePeriodSeconds = ptrTo(int64(30)) }
	cases := []struct {
		name   string
		pod    *v1.Pod
		rt     *podRuntime
		probes fakeProbes
		want   podActions
	}{
		{
			name:   "liveness failure: killed (kept for its last state) and restarted",
			pod:    testPod(withContainers(a)),
			rt:     rtOf(sbs(s1), running(a, "c-a", "s1")),
			probes: fakeProbes{prober.Liveness: {"c-a": prober.Failure}},
			want: podActions{SandboxID: "s1", InitToStart: -1, ContainersToStart: []int{0},
				ContainersToKill: []killTarget{{ID: "c-a", Name: "a", Reason: "failed liveness probe", Message: "Container a failed liveness probe, will be restarted", Keep: true}}},
		},
		{
			name:   "liveness success or no verdict: nothing",
			pod:    testPod(withContainers(a)),
			rt:     rtOf(sbs(s1), running(a, "c-a", "s1")),
			probes: fakeProbes{prober.Liveness: {"c-a": prober.Success}, prober.Startup: {"c-other": prober.Failure}},
			want:   podActions{SandboxID: "s1", InitToStart: -1},
		},
		{
			name:   "startup failure under restartPolicy Never, nothing else runs: the whole pod is stopped",
			pod:    testPod(withContainers(a), withRestart(v1.RestartPolicyNever)),
			rt:     rtOf(sbs(s1), running(a, "c-a", "s1")),
			probes: fakeProbes{prober.Startup: {"c-a": prober.Failure}},
			want:   podActions{SandboxID: "s1", InitToStart: -1, KillPod: true},
		},
		{
			name:   "startup failure under restartPolicy Never, another container runs: killed, not restarted",
			pod:    testPod(withContainers(a, ctr("b")), withRestart(v1.RestartPolicyNever)),
			rt:     rtOf(sbs(s1), running(a, "c-a", "s1"), running(ctr("b"), "c-b", "s1")),
			probes: fakeProbes{prober.Startup: {"c-a": prober.Failure}},
			want: podActions{SandboxID: "s1", InitToStart: -1,
				ContainersToKill: []killTarget{{ID: "c-a", Name: "a", Reason: "failed startup probe", Message: "Container a failed startup probe", Keep: true}}},
		},
		{
			name:   "container restart policy Always wins over the pod's Never",
			pod:    testPod(withContainers(withPolicy(a, v1.ContainerRestartPolicyAlways)), withRestart(v1.RestartPolicyNever)),
			rt:     rtOf(sbs(s1), running(withPolicy(a, v1.ContainerRestartPolicyAlways), "c-a", "s1")),
			probes: fakeProbes{prober.Liveness: {"c-a": prober.Failure}},
			want: podActions{SandboxID: "s1", InitToStart: -1, ContainersToStart: []int{0},
				ContainersToKill: []killTarget{{ID: "c-a", Name: "a", Reason: "failed liveness probe", Message: "Container a failed liveness probe, will be restarted", Keep: true}}},
		},
		{
			name:   "probe-level grace period",
			pod:    testPod(withContainers(graced), podGrace),
			rt:     rtOf(sbs(s1), running(graced, "c-a", "s1")),
			probes: fakeProbes{prober.Startup: {"c-a": prober.Failure}},
			want: podActions{SandboxID: "s1", InitToStart: -1, ContainersToStart: []int{0},
				ContainersToKill: []killTarget{{ID: "c-a", Name: "a", Reason: "failed startup probe", Message: "Container a failed startup probe, will be restarted", Grace: ptrTo(int64(9)), Keep: true}}},
		},
		{
			name:   "sidecar whose startup probe has not succeeded holds the next init container",
			pod:    testPod(withInit(side, i2), withContainers(a)),
			rt:     rtOf(sbs(s1), running(side, "c-side", "s1")),
			probes: fakeProbes{prober.Startup: {"c-side": prober.Unknown}},
			want:   podActions{SandboxID: "s1", InitToStart: -1},
		},
		{
			name:   "sidecar started: the next init container runs",
			pod:    testPod(withInit(side, i2), withContainers(a)),
			rt:     rtOf(sbs(s1), running(side, "c-side", "s1")),
			probes: fakeProbes{prober.Startup: {"c-side": prober.Success}},
			want:   podActions{SandboxID: "s1", InitToStart: 1},
		},
		{
			name:   "sidecar failing its startup probe before init: restarted",
			pod:    testPod(withInit(side, i2), withContainers(a)),
			rt:     rtOf(sbs(s1), running(side, "c-side", "s1")),
			probes: fakeProbes{prober.Startup: {"c-side": prober.Failure}},
			want: podActions{SandboxID: "s1", InitToStart: 0,
				ContainersToKill: []killTarget{{ID: "c-side", Name: "side", Reason: "failed startup probe", Message: "Init container side failed startup probe", Keep: true}}},
		},
		{
			name:   "sidecar failing liveness after init: restarted",
			pod:    testPod(withInit(side), withContainers(a)),
			rt:     rtOf(sbs(s1), running(side, "c-side", "s1"), running(a, "c-a", "s1")),
			probes: fakeProbes{prober.Startup: {"c-side": prober.Success}, prober.Liveness: {"c-side": prober.Failure}},
			want: podActions{SandboxID: "s1", InitToStart: -1, SidecarsToStart: []int{0},
				ContainersToKill: []killTarget{{ID: "c-side", Name: "side", Reason: "failed liveness probe", Message: "Init container side failed liveness probe", Keep: true}}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := computePodActions(tc.pod, tc.rt, nil, tc.probes)
			if diff := cmp.Diff(tc.want, got, actionsCmpOpts...); diff != "" {
				t.Errorf("computePodActions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestKillMessage(t *testing.T) {
	if got := (killTarget{Name: "a", Reason: "sandbox changed"}).killMessage(); got != "Container a sandbox changed, will be restarted" {
		t.Errorf("%q", got)
	}
	if got := (killTarget{Name: "a", Message: "Container a failed liveness probe"}).killMessage(); got != "Container a failed liveness probe" {
		t.Errorf("%q", got)
	}
}

// notReadyProbes says every container is started and none is ready.
type notReadyProbes struct{}

func (notReadyProbes) UpdatePodStatus(_ *v1.Pod, s *v1.PodStatus) {
	for i := range s.ContainerStatuses {
		s.ContainerStatuses[i].Ready = false
	}
}

// The probes' verdicts decide the containers' ready flags before the conditions are computed.
func TestGeneratePodStatusProbesDecideReadiness(t *testing.T) {
	a := ctr("a")
	in := statusIn(testPod(withContainers(a)), rtOf(sbs(sandbox("s1", 0, true)), running(a, "c-a", "s1")))
	in.Probes = notReadyProbes{}
	st := generatePodStatus(in)
	if st.ContainerStatuses[0].Ready {
		t.Fatalf("container ready although its probe says not")
	}
	for _, c := range st.Conditions {
		if (c.Type == v1.PodReady || c.Type == v1.ContainersReady) && (c.Status != v1.ConditionFalse || c.Message != "containers with unready status: [a]") {
			t.Errorf("%s = %s %q, want False with the unready container", c.Type, c.Status, c.Message)
		}
	}
}

func TestProbeCommandExpandsStaticEnv(t *testing.T) {
	c := &v1.Container{Env: []v1.EnvVar{{Name: "FILE", Value: "/tmp/ok"}, {Name: "FROM", ValueFrom: &v1.EnvVarSource{}}}}
	got := probeCommand(c, []string{"test", "-f", "$(FILE)", "$(FROM)x", "$(NONE)", "$$(FILE)"})
	want := []string{"test", "-f", "/tmp/ok", "x", "$(NONE)", "$(FILE)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
