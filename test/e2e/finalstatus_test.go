//go:build e2e

package e2e

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The status a deleted pod leaves the API with, as the upstream kubelet v1.37 writes it before it
// deletes the pod object itself: each test watches the pod and asserts on the last version the
// watch delivered before the pod's removal.

// deleteAndWatchEnd deletes the pod (with the grace period, if not nil) and returns the last
// version of it the watch saw before its removal, and how long the removal took.
func deleteAndWatchEnd(t *testing.T, ns, name string, w *podWatch, grace *int64) (*v1.Pod, time.Duration) {
	t.Helper()
	start := time.Now()
	if err := s.kube.CoreV1().Pods(ns).Delete(ctxFor(t, 30*time.Second), name, metav1.DeleteOptions{GracePeriodSeconds: grace}); err != nil {
		t.Fatalf("deleting pod %s: %v", name, err)
	}
	gone := w.waitGone(t, time.Minute)
	last := w.last()
	if last == nil {
		t.Fatalf("no version of pod %s seen", name)
	}
	return last, gone.Sub(start)
}

func wantState(t *testing.T, what string, got v1.ContainerState, want string) {
	t.Helper()
	if s := stateString(got); s != want {
		t.Errorf("%s: %s, want %s", what, s, want)
	}
}

// A container that never ran (its image may not be pulled) ends terminated with an unknown status,
// exit 137, in a Failed pod, and its start failure recorded a Failed event naming the reason.
func TestFinalStatusNeverStartedContainer(t *testing.T) {
	ns := newNamespace(t)
	c := v1.Container{Name: "c", Image: image("does-not-exist:1.0"), ImagePullPolicy: v1.PullNever}
	pod := basePod("never", c)
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	w := watchPod(t, ns, "never")
	createPod(t, ns, pod)
	w.waitFor(t, time.Minute, "ErrImageNeverPull", func(p *v1.Pod) bool {
		st, ok := containerStatus(p, "c")
		return ok && st.State.Waiting != nil && st.State.Waiting.Reason == "ErrImageNeverPull"
	})
	waitEvent(t, ns, "never", "Failed", "Error: ErrImageNeverPull", 30*time.Second)

	last, took := deleteAndWatchEnd(t, ns, "never", w, nil)
	if last.Status.Phase != v1.PodFailed {
		t.Errorf("last phase before the removal %s, want Failed: %s", last.Status.Phase, describeStatus(last))
	}
	st, _ := containerStatus(last, "c")
	wantState(t, "c at the end", st.State, "terminated(137 ContainerStatusUnknown)")
	if st.State.Terminated != nil && st.State.Terminated.Message != "The container could not be located when the pod was terminated" {
		t.Errorf("c's final message %q", st.State.Terminated.Message)
	}
	// Nothing to stop: the pod goes at once, not after its grace period.
	if took > 3*time.Second {
		t.Errorf("the pod took %v to go (grace period 5 s, nothing running)", took)
	}
}

// A pod deleted while its init container runs (which exits 0 on SIGTERM) has not initialised:
// its regular container stays PodInitializing in the Failed pod, as the kubelet judges from the
// pod it had when the deletion came, not from the init container's exit.
func TestFinalStatusDeleteDuringInit(t *testing.T) {
	ns := newNamespace(t)
	pod := basePod("init", busybox("c", "echo must not run"))
	pod.Spec.InitContainers = []v1.Container{busybox("init", "trap 'exit 0' TERM; echo trapping; sleep 3600 & wait")}
	w := watchPod(t, ns, "init")
	createPod(t, ns, pod)
	w.waitFor(t, time.Minute, "init running", func(p *v1.Pod) bool {
		st, ok := containerStatus(p, "init")
		return ok && st.State.Running != nil
	})
	// Its SIGTERM trap is set once it says so.
	waitLogs(t, ns, "init", "init", "trapping\n")

	last, _ := deleteAndWatchEnd(t, ns, "init", w, nil)
	if last.Status.Phase != v1.PodFailed {
		t.Errorf("last phase before the removal %s, want Failed: %s", last.Status.Phase, describeStatus(last))
	}
	st, _ := containerStatus(last, "init")
	wantState(t, "init at the end", st.State, "terminated(0 Completed)")
	st, _ = containerStatus(last, "c")
	wantState(t, "c at the end", st.State, "waiting(PodInitializing: )")
	for _, sp := range w.snapshot() {
		if st, ok := containerStatus(sp.pod, "c"); ok && st.State.Waiting == nil {
			t.Errorf("c left the waiting state at some point: %s", describeStatus(sp.pod))
		}
	}
}

// An ephemeral container whose command does not exist waits with RunContainerError over its
// StartError while the pod runs; once the pod is deleted it shows the StartError as both its
// state and its last state, to the end.
func TestFinalStatusEphemeralStartError(t *testing.T) {
	ns := newNamespace(t)
	pod := basePod("app", v1.Container{Name: "app", Image: image("vktest:latest"), Args: []string{"sleep", "3600"}})
	w := watchPod(t, ns, "app")
	createPod(t, ns, pod)
	w.waitFor(t, time.Minute, "running and ready", isRunningReady)
	ctx := ctxFor(t, time.Minute)
	cur, err := s.kube.CoreV1().Pods(ns).Get(ctx, "app", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Spec.EphemeralContainers = append(cur.Spec.EphemeralContainers, v1.EphemeralContainer{
		EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "broken", Image: image("busybox:latest"), Command: []string{"/no/such/binary"}},
	})
	if _, err := s.kube.CoreV1().Pods(ns).UpdateEphemeralContainers(ctx, "app", cur, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("adding an ephemeral container: %v", err)
	}
	w.waitFor(t, time.Minute, "broken waiting with RunContainerError", func(p *v1.Pod) bool {
		st, ok := ephemeralStatus(p, "broken")
		return ok && st.State.Waiting != nil && st.State.Waiting.Reason == "RunContainerError" &&
			st.LastTerminationState.Terminated != nil && st.LastTerminationState.Terminated.Reason == "StartError"
	})

	last, _ := deleteAndWatchEnd(t, ns, "app", w, nil)
	if last.Status.Phase != v1.PodSucceeded {
		t.Errorf("last phase before the removal %s, want Succeeded (app exits 0 on SIGTERM): %s", last.Status.Phase, describeStatus(last))
	}
	st, _ := ephemeralStatus(last, "broken")
	wantState(t, "broken at the end", st.State, "terminated(128 StartError)")
	wantState(t, "broken's last state at the end", st.LastTerminationState, "terminated(128 StartError)")
	// The status the termination starts with (the pod still running, the StartError as state)
	// is written before the containers are stopped; whether the API keeps it as its own version
	// depends on how soon the next one follows.
	for _, sp := range w.snapshot() {
		if st, ok := ephemeralStatus(sp.pod, "broken"); ok && sp.pod.Status.Phase == v1.PodRunning && st.State.Terminated != nil {
			t.Logf("termination's first status seen: %s", describeStatus(sp.pod))
		}
	}
}

// A deletion with grace 0 removes the pod at once; vk-cri sees the deletion (the pod's version
// with a deletion timestamp comes before its removal) and, as the kubelet, still stops the
// container with a Killing event, and removes it from the runtime.
func TestFinalStatusGraceZeroKilling(t *testing.T) {
	ns := newNamespace(t)
	pod := basePod("zero", busybox("c", "trap '' TERM; echo ignoring; sleep 3600 & wait"))
	w := watchPod(t, ns, "zero")
	created := createPod(t, ns, pod)
	w.waitFor(t, time.Minute, "running and ready", isRunningReady)
	// It ignores SIGTERM once it says so: only the SIGKILL after 2 s stops it.
	waitLogs(t, ns, "zero", "c", "ignoring\n")
	zero := int64(0)
	if _, took := deleteAndWatchEnd(t, ns, "zero", w, &zero); took > 2*time.Second {
		t.Errorf("a grace-0 deletion took %v", took)
	}
	if ev := waitEvent(t, ns, "zero", "Killing", "Stopping container c", 30*time.Second); ev.InvolvedObject.UID != created.UID {
		t.Errorf("Killing event for %s, want the pod %s", ev.InvolvedObject.UID, created.UID)
	}
	waitRuntimeEmpty(t, string(created.UID), 30*time.Second)
}

// waitRuntimeEmpty waits until the runtime holds no container or sandbox of the pod.
func waitRuntimeEmpty(t *testing.T, uid string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		sbs, cs := runtimeObjects(t, uid)
		if len(sbs) == 0 && len(cs) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the runtime still holds %d sandboxes and %d containers of pod %s", len(sbs), len(cs), uid)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
