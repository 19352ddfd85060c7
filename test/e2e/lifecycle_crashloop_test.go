//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// A start that fails after a back-off shows RunContainerError with the new restart count, as the
// kubelet's next sync does: never a CrashLoopBackOff that nobody waited out.
func TestLifecycleCrashLoopFailedStartShowsRunContainerError(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, basePod("notfound", v1.Container{Name: "c", Image: image("busybox:latest"), Command: []string{"/no/such/binary"}}))
	w := watchPod(t, ns, "notfound")
	waitPod(t, ns, "notfound", 90*time.Second, "the third failed start", func(p *v1.Pod) bool {
		c, ok := containerStatus(p, "c")
		return ok && c.RestartCount >= 2 && c.State.Waiting != nil && c.State.Waiting.Reason == "RunContainerError"
	})
	first := map[int32]string{}
	for _, sp := range w.snapshot() {
		c, ok := containerStatus(sp.pod, "c")
		if !ok || c.State.Waiting == nil || c.LastTerminationState.Terminated == nil {
			continue
		}
		if _, seen := first[c.RestartCount]; !seen {
			first[c.RestartCount] = c.State.Waiting.Reason
		}
	}
	for rc := int32(0); rc <= 2; rc++ {
		if first[rc] != "RunContainerError" {
			t.Errorf("restartCount %d first waited with %q, want RunContainerError (all: %v)", rc, first[rc], first)
		}
	}
}

// The previous log of an instance the crash loop already removed is the kubelet's answer: a
// 200 whose body names the instance.
func TestLifecycleCrashLoopPreviousLogOfRemovedInstance(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, basePod("crash", busybox("c", "echo instance; sleep 1; exit 1")))
	p := waitPod(t, ns, "crash", 90*time.Second, "the second instance exited", func(p *v1.Pod) bool {
		c, ok := containerStatus(p, "c")
		return ok && c.RestartCount == 1 && c.State.Terminated != nil && c.LastTerminationState.Terminated != nil
	})
	c, _ := containerStatus(p, "c")
	want := "unable to retrieve container logs for " + c.LastTerminationState.Terminated.ContainerID
	// The older instance is removed right after the status that shows the newer one's exit.
	var got string
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 5*time.Second, true, func(ctx context.Context) (bool, error) {
		raw, err := s.kube.CoreV1().Pods(ns).GetLogs("crash", &v1.PodLogOptions{Container: "c", Previous: true}).DoRaw(ctx)
		if err != nil {
			got = "error: " + err.Error()
			return false, nil
		}
		got = string(raw)
		return got == want, nil
	})
	if err != nil {
		t.Errorf("previous log %q, want %q", got, want)
	}
	if cur := mustKubectl(t, nil, "", "logs", "-n", ns, "crash", "-c", "c"); cur != "instance\n" {
		t.Errorf("current log %q", cur)
	}
}
