// Package podspec holds the rules read from a pod's spec alone that translation, the sync's
// actions and status generation all apply: whether an init container is restartable (a
// sidecar), and whether a container that exited runs again under its restart rules, its own
// restart policy and the pod's.
//
// It mirrors the kubelet's pkg/kubelet/container/helpers.go (ShouldContainerBeRestarted) and
// pkg/api/v1/pod's IsRestartableInitContainer. It holds no state.
package podspec
