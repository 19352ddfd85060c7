// Package status owns pod status: its pure generation from API objects, and the one component
// that writes pod statuses to the API and removes pods from it.
//
// The pure parts: the pod's phase from its container statuses, its conditions (Initialized,
// ContainersReady, Ready with readiness gates, transition times, and the merge with conditions
// other writers own), the final status of a pod whose termination is complete, and the user a
// container status reports. They mirror the kubelet's pkg/kubelet/status (generate.go's
// condition generators, status_manager.go's TerminatePod for the final status and its merge of
// pod conditions) and the status generation of pkg/kubelet/kubelet_pods.go (getPhase,
// generateAPIPodStatus, convertContainerStatusUser). They hold no state, call no runtime and
// write nothing to the API.
//
// The status writer, the part of the kubelet's status manager that talks to the API:
//   - pod_client.go: the pod client virtual-kubelet's pod controller writes statuses through
//     (FollowAPIStatus). Its status updates keep the conditions others own; its force deletions
//     of pods vk-cri runs are handed back to their owner; the controller's view of pods tells a
//     terminating pod from its successor under the same name.
//   - removal.go: RemoveTerminated, the final status then a grace-0 deletion of that UID, the
//     only way vk-cri removes a pod from the API.
//
// The generation of container statuses from the runtime's state (generatePodStatus) is still
// in provider/.
package status
