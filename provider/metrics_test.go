package provider

import (
	"reflect"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestRuntimeCounts(t *testing.T) {
	pods := map[string]*podRuntime{
		"running": {
			Sandboxes: []*sandboxState{{ID: "new", Ready: true}, {ID: "old"}},
			Containers: []*containerState{
				{ID: "a", State: runtimeapi.ContainerState_CONTAINER_RUNNING},
				{ID: "b", State: runtimeapi.ContainerState_CONTAINER_EXITED},
				{ID: "c", State: runtimeapi.ContainerState_CONTAINER_CREATED},
			},
		},
		"stopped": {
			Sandboxes:  []*sandboxState{{ID: "x"}},
			Containers: []*containerState{{ID: "d", State: runtimeapi.ContainerState_CONTAINER_UNKNOWN}},
		},
	}
	n, cs := runtimeCounts(pods)
	if n != 1 || !reflect.DeepEqual(cs, map[string]int{"running": 1, "exited": 1, "created": 1, "unknown": 1}) {
		t.Errorf("running pods %d, containers %v", n, cs)
	}
}

func TestWorkerOperationAndStart(t *testing.T) {
	if workerOperation(true, false) != "create" || workerOperation(false, false) != "sync" || workerOperation(true, true) != "kill" {
		t.Error("worker operation names")
	}
	pending := &v1.PodStatus{Phase: v1.PodPending}
	running := v1.PodStatus{Phase: v1.PodRunning}
	if !startedRunning(pending, running) || startedRunning(nil, running) || startedRunning(&running, running) ||
		startedRunning(pending, v1.PodStatus{Phase: v1.PodSucceeded}) {
		t.Error("startedRunning")
	}
}

func TestRelistHealth(t *testing.T) {
	now := time.Now()
	if err := relistHealth(now.Add(-time.Minute), now, 3*time.Minute); err != nil {
		t.Errorf("fresh relist: %v", err)
	}
	if err := relistHealth(now.Add(-4*time.Minute), now, 3*time.Minute); err == nil {
		t.Error("stale relist reported healthy")
	}
}
