//go:build e2e

package e2e

// These tests stop vk-cri and containerd; they run last (files run in name order).

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

func TestDisruptionRestartedAgentAdoptsRunningPods(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, basePod("keep", serverContainer("web"), v1.Container{Name: "sleeper", Image: image("busybox:latest"), Command: []string{"sleep", "3600"}}))
	before := waitPod(t, ns, "keep", 2*time.Minute, "Running and Ready", isRunningReady)
	_, containersBefore := runtimeObjects(t, string(before.UID))

	stopNode(t, "kill")
	startNode(t, "")
	// A pod created after the restart running proves the new process has synced its pods.
	createPod(t, ns, basePod("after", serverContainer("web")))
	waitPod(t, ns, "after", 2*time.Minute, "Running and Ready", isRunningReady)

	after := waitPod(t, ns, "keep", 30*time.Second, "Running and Ready", isRunningReady)
	if got, want := containerIDs(after), containerIDs(before); !equalMaps(got, want) {
		t.Errorf("container IDs changed across the restart: before %v after %v", want, got)
	}
	for _, c := range after.Status.ContainerStatuses {
		if c.RestartCount != 0 || c.State.Running == nil || !c.Ready {
			t.Errorf("container %s after restart: restarts=%d %s ready=%v", c.Name, c.RestartCount, stateString(c.State), c.Ready)
		}
	}
	_, containersAfter := runtimeObjects(t, string(before.UID))
	if len(containersAfter) != len(containersBefore) {
		t.Errorf("runtime holds %d containers for the pod after the restart, %d before", len(containersAfter), len(containersBefore))
	}
}

func nodeReadyCondition(ctx context.Context) (v1.NodeCondition, error) {
	n, err := s.kube.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
	if err != nil {
		return v1.NodeCondition{}, err
	}
	for _, c := range n.Status.Conditions {
		if c.Type == v1.NodeReady {
			return c, nil
		}
	}
	return v1.NodeCondition{}, nil
}

func TestDisruptionRuntimeDownMakesNodeNotReady(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, basePod("survivor", serverContainer("web")))
	before := waitPod(t, ns, "survivor", 2*time.Minute, "Running and Ready", isRunningReady)

	stackScript(t, "containerd.sh", "kill", "vk")
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			stackScript(t, "containerd.sh", "start", "vk")
		}
	})
	var cond v1.NodeCondition
	err := wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		c, err := nodeReadyCondition(ctx)
		cond = c
		return err == nil && c.Status == v1.ConditionFalse, nil
	})
	if err != nil {
		t.Fatalf("node did not become NotReady with containerd down; Ready condition: %+v", cond)
	}
	if cond.Reason != "KubeletNotReady" || !strings.Contains(cond.Message, "container runtime is down") {
		t.Errorf("NotReady condition reason %q message %q", cond.Reason, cond.Message)
	}

	stackScript(t, "containerd.sh", "start", "vk")
	restarted = true
	err = wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		c, err := nodeReadyCondition(ctx)
		cond = c
		return err == nil && c.Status == v1.ConditionTrue, nil
	})
	if err != nil {
		t.Fatalf("node did not become Ready again; Ready condition: %+v", cond)
	}
	after := waitPod(t, ns, "survivor", 30*time.Second, "Running and Ready", isRunningReady)
	if after.Status.ContainerStatuses[0].ContainerID != before.Status.ContainerStatuses[0].ContainerID {
		t.Errorf("container changed across the containerd restart: %s → %s", before.Status.ContainerStatuses[0].ContainerID, after.Status.ContainerStatuses[0].ContainerID)
	}
	// Pods still start once the runtime is back.
	createPod(t, ns, basePod("newcomer", serverContainer("web")))
	waitPod(t, ns, "newcomer", 2*time.Minute, "Running and Ready", isRunningReady)
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
