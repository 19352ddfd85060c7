package translate

import (
	"github.com/vk-cri/vk-cri/internal/podtest"
)

// The shared pod fixtures (internal/podtest).
type podOpt = podtest.Option

const (
	testPodName = podtest.PodName
	testPodNS   = podtest.PodNS
	testPodUID  = podtest.PodUID
)

var (
	testPod        = podtest.Pod
	withContainers = podtest.WithContainers
	withInit       = podtest.WithInit
	ctr            = podtest.Ctr
	knownBug       = podtest.KnownBug
)

// Shared fixtures of the translation's unit tests.

// idsPerPod is the size of a pod's user namespace range: the kubelet's default, which the
// provider's allocator hands out (provider/userns_allocator.go).
const idsPerPod = 65536

func ptrTo[T any](v T) *T { return &v }

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
