package podspec

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestIsSidecar(t *testing.T) {
	cases := []struct {
		name string
		c    v1.Container
		want bool
	}{
		{"no policy", ctr("a"), false},
		{"Always", withPolicy(ctr("a"), v1.ContainerRestartPolicyAlways), true},
		{"OnFailure", withPolicy(ctr("a"), v1.ContainerRestartPolicyOnFailure), false},
		{"Never", withPolicy(ctr("a"), v1.ContainerRestartPolicyNever), false},
	}
	for _, tc := range cases {
		if got := IsSidecar(&tc.c); got != tc.want {
			t.Errorf("%s: IsSidecar = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestMatchingRestartRule(t *testing.T) {
	in42 := restartRule(v1.ContainerRestartRuleActionRestart, v1.ContainerRestartRuleOnExitCodesOpIn, 42)
	in1to3 := restartRule(v1.ContainerRestartRuleActionRestart, v1.ContainerRestartRuleOnExitCodesOpIn, 1, 2, 3)
	notIn0 := restartRule(v1.ContainerRestartRuleActionRestart, v1.ContainerRestartRuleOnExitCodesOpNotIn, 0)
	all42 := restartRule(v1.ContainerRestartRuleActionRestartAllContainers, v1.ContainerRestartRuleOnExitCodesOpIn, 42)
	noCodes := v1.ContainerRestartRule{Action: v1.ContainerRestartRuleActionRestart}
	badOp := restartRule(v1.ContainerRestartRuleActionRestart, "Maybe", 42)

	cases := []struct {
		name     string
		rules    []v1.ContainerRestartRule
		code     int32
		wantRule *v1.ContainerRestartRule
	}{
		{"no rules", nil, 1, nil},
		{"In matches", []v1.ContainerRestartRule{in42}, 42, &in42},
		{"In does not match", []v1.ContainerRestartRule{in42}, 41, nil},
		{"In with several values", []v1.ContainerRestartRule{in1to3}, 2, &in1to3},
		{"NotIn matches", []v1.ContainerRestartRule{notIn0}, 7, &notIn0},
		{"NotIn does not match", []v1.ContainerRestartRule{notIn0}, 0, nil},
		{"first matching rule wins", []v1.ContainerRestartRule{in42, notIn0}, 42, &in42},
		{"later rule matches when the first does not", []v1.ContainerRestartRule{in42, notIn0}, 3, &notIn0},
		{"RestartAllContainers rule is returned too", []v1.ContainerRestartRule{all42, in42}, 42, &all42},
		{"rule without exit codes is skipped", []v1.ContainerRestartRule{noCodes, in42}, 42, &in42},
		{"rule without exit codes never matches", []v1.ContainerRestartRule{noCodes}, 42, nil},
		{"unknown operator never matches", []v1.ContainerRestartRule{badOp}, 42, nil},
	}
	for _, tc := range cases {
		c := ctr("a")
		c.RestartPolicyRules = tc.rules
		rule, ok := MatchingRestartRule(&c, tc.code)
		if (tc.wantRule != nil) != ok {
			t.Errorf("%s: found = %v, want %v", tc.name, ok, tc.wantRule != nil)
			continue
		}
		if ok && (rule.Action != tc.wantRule.Action || rule.ExitCodes.Operator != tc.wantRule.ExitCodes.Operator || len(rule.ExitCodes.Values) != len(tc.wantRule.ExitCodes.Values)) {
			t.Errorf("%s: rule = %+v, want %+v", tc.name, rule, *tc.wantRule)
		}
	}
}

func TestShouldRestart(t *testing.T) {
	never, onFailure, always := v1.ContainerRestartPolicyNever, v1.ContainerRestartPolicyOnFailure, v1.ContainerRestartPolicyAlways
	restartIn42 := restartRule(v1.ContainerRestartRuleActionRestart, v1.ContainerRestartRuleOnExitCodesOpIn, 42)
	restartNotIn01 := restartRule(v1.ContainerRestartRuleActionRestart, v1.ContainerRestartRuleOnExitCodesOpNotIn, 0, 1)
	restartAllIn42 := restartRule(v1.ContainerRestartRuleActionRestartAllContainers, v1.ContainerRestartRuleOnExitCodesOpIn, 42)

	type row struct {
		name  string
		pod   v1.RestartPolicy
		c     v1.Container
		code  int32
		want  bool
		bug   string
		extra string
	}
	plain := ctr("a")
	cases := []row{
		// pod policy alone
		{name: "pod Always, exit 0", pod: v1.RestartPolicyAlways, c: plain, code: 0, want: true},
		{name: "pod Always, exit 1", pod: v1.RestartPolicyAlways, c: plain, code: 1, want: true},
		{name: "pod OnFailure, exit 0", pod: v1.RestartPolicyOnFailure, c: plain, code: 0, want: false},
		{name: "pod OnFailure, exit 1", pod: v1.RestartPolicyOnFailure, c: plain, code: 1, want: true},
		{name: "pod OnFailure, exit -1", pod: v1.RestartPolicyOnFailure, c: plain, code: -1, want: true},
		{name: "pod Never, exit 0", pod: v1.RestartPolicyNever, c: plain, code: 0, want: false},
		{name: "pod Never, exit 1", pod: v1.RestartPolicyNever, c: plain, code: 1, want: false},
		{name: "pod policy empty means Always", pod: "", c: plain, code: 0, want: true},
		{name: "unknown pod policy means Always", pod: "Sometimes", c: plain, code: 0, want: true},

		// container policy wins over the pod's
		{name: "container Always in Never pod", pod: v1.RestartPolicyNever, c: withPolicy(plain, always), code: 0, want: true},
		{name: "container Never in Always pod", pod: v1.RestartPolicyAlways, c: withPolicy(plain, never), code: 1, want: false},
		{name: "container OnFailure in Never pod, exit 1", pod: v1.RestartPolicyNever, c: withPolicy(plain, onFailure), code: 1, want: true},
		{name: "container OnFailure in Always pod, exit 0", pod: v1.RestartPolicyAlways, c: withPolicy(plain, onFailure), code: 0, want: false},
		{name: "unknown container policy falls back to the pod's", pod: v1.RestartPolicyNever, c: withPolicy(plain, "Sometimes"), code: 1, want: false},
		{name: "unknown container policy falls back to the pod's (Always)", pod: v1.RestartPolicyAlways, c: withPolicy(plain, "Sometimes"), code: 1, want: true},

		// rules
		{name: "Restart rule matches: restart despite container Never", pod: v1.RestartPolicyNever, c: withRules(plain, never, restartIn42), code: 42, want: true},
		{name: "Restart rule does not match: container Never", pod: v1.RestartPolicyAlways, c: withRules(plain, never, restartIn42), code: 1, want: false},
		{name: "Restart rule does not match: container OnFailure, exit 1", pod: v1.RestartPolicyNever, c: withRules(plain, onFailure, restartIn42), code: 1, want: true},
		{name: "Restart rule does not match: container OnFailure, exit 0", pod: v1.RestartPolicyNever, c: withRules(plain, onFailure, restartIn42), code: 0, want: false},
		{name: "NotIn rule matches exit 2", pod: v1.RestartPolicyNever, c: withRules(plain, never, restartNotIn01), code: 2, want: true},
		{name: "NotIn rule does not match exit 1", pod: v1.RestartPolicyNever, c: withRules(plain, never, restartNotIn01), code: 1, want: false},
		{name: "rules ignored without a container policy", pod: v1.RestartPolicyNever, c: func() v1.Container {
			c := plain
			c.RestartPolicyRules = []v1.ContainerRestartRule{restartIn42}
			return c
		}(), code: 42, want: false},
		{
			name: "RestartAllContainers rule matches: the container restarts (RestartAllContainersOnContainerExits is beta, on by default in v1.37)",
			pod:  v1.RestartPolicyNever, c: withRules(plain, never, restartAllIn42), code: 42, want: true,
			bug: "ShouldRestart only honours the Restart action; with RestartAllContainersOnContainerExits on (default in v1.36+), podutil.ContainerShouldRestart returns true for a matching RestartAllContainers rule",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := testPod(withContainers(tc.c), withRestart(tc.pod))
			got := ShouldRestart(&pod.Spec.Containers[0], pod, tc.code)
			if tc.bug != "" {
				diff := ""
				if got != tc.want {
					diff = "ShouldRestart differs"
				}
				knownBug(t, tc.bug, diff)
				return
			}
			if got != tc.want {
				t.Errorf("ShouldRestart(pod %q, exit %d) = %v, want %v", tc.pod, tc.code, got, tc.want)
			}
		})
	}
}
