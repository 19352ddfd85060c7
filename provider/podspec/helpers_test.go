package podspec

import (
	"github.com/vk-cri/vk-cri/internal/podtest"
)

// The shared pod fixtures (internal/podtest).
type podOpt = podtest.Option

var (
	testPod        = podtest.Pod
	withContainers = podtest.WithContainers
	withRestart    = podtest.WithRestart
	ctr            = podtest.Ctr
	withPolicy     = podtest.WithPolicy
	withRules      = podtest.WithRules
	restartRule    = podtest.RestartRule
	knownBug       = podtest.KnownBug
)

// Fixtures of the spec rules' unit tests.
