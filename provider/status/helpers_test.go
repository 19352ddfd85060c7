package status

import (
	v1 "k8s.io/api/core/v1"

	"github.com/vk-cri/vk-cri/internal/podtest"
)

// The shared pod fixtures (internal/podtest).
type podOpt = podtest.Option

var (
	testT0         = podtest.T0
	testPod        = podtest.Pod
	withContainers = podtest.WithContainers
	withInit       = podtest.WithInit
	withRestart    = podtest.WithRestart
	ctr            = podtest.Ctr
	sidecarCtr     = podtest.Sidecar
	withPolicy     = podtest.WithPolicy
	withRules      = podtest.WithRules
	restartRule    = podtest.RestartRule
	knownBug       = podtest.KnownBug
)

// Fixtures of the status unit tests. Every time is derived from testT0 so that the tests never
// depend on the wall clock.

func ptrTo[T any](v T) *T { return &v }

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
