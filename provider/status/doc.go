// Package status holds the pure parts of pod status generation: the pod's phase from its
// container statuses, its conditions (Initialized, ContainersReady, Ready with readiness gates,
// transition times, and the merge with conditions other writers own), the final status of a
// pod whose termination is complete, and the user a container status reports.
//
// It mirrors the kubelet's pkg/kubelet/status (generate.go's condition generators,
// status_manager.go's TerminatePod for the final status and its merge of pod conditions) and
// the status generation of pkg/kubelet/kubelet_pods.go (getPhase, generateAPIPodStatus,
// convertContainerStatusUser).
//
// Everything here is a function of API objects: it holds no state, calls no runtime and writes
// nothing to the API. The generation of container statuses from the runtime's state
// (generatePodStatus) is still in provider/, and so is the writing of pod statuses.
package status
