package provider

import (
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// PodMetrics receives what the pod workers and the relister measure (metrics.Recorder is one).
type PodMetrics interface {
	// PodWorker is one sync of one pod: create (its first), sync, or kill (terminating it).
	PodWorker(operation string, took time.Duration)
	// PodStarted is the time from first seeing a pod to reporting it Running.
	PodStarted(took time.Duration)
	// RuntimeState is the latest listing: pods with a ready sandbox, containers by state.
	RuntimeState(runningPods int, containers map[string]int)
}

type noMetrics struct{}

func (noMetrics) PodWorker(string, time.Duration)  {}
func (noMetrics) PodStarted(time.Duration)         {}
func (noMetrics) RuntimeState(int, map[string]int) {}

// containerStateLabel names a CRI container state as the kubelet's running_containers does.
func containerStateLabel(s runtimeapi.ContainerState) string {
	switch s {
	case runtimeapi.ContainerState_CONTAINER_RUNNING:
		return "running"
	case runtimeapi.ContainerState_CONTAINER_EXITED:
		return "exited"
	case runtimeapi.ContainerState_CONTAINER_CREATED:
		return "created"
	}
	return "unknown"
}

// runtimeCounts counts the pods that have a ready sandbox and the containers by state.
func runtimeCounts(pods map[string]*podRuntime) (runningPods int, containers map[string]int) {
	containers = map[string]int{}
	for _, rt := range pods {
		for _, sb := range rt.Sandboxes {
			if sb.Ready {
				runningPods++
				break
			}
		}
		for _, c := range rt.Containers {
			containers[containerStateLabel(c.State)]++
		}
	}
	return runningPods, containers
}

// workerOperation names a sync for kubelet_pod_worker_duration_seconds.
func workerOperation(firstSync, deleting bool) string {
	switch {
	case deleting:
		return "kill"
	case firstSync:
		return "create"
	}
	return "sync"
}

// startedRunning reports whether a status change is the pod's first start: Pending → Running.
func startedRunning(before *v1.PodStatus, after v1.PodStatus) bool {
	return before != nil && before.Phase == v1.PodPending && after.Phase == v1.PodRunning
}
