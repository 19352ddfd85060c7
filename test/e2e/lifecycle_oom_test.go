//go:build e2e

package e2e

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// oomContainer allocates 64 MiB in its shell (PID 1) under a 32 MiB memory limit: the kernel's
// OOM killer kills it.
func oomContainer() v1.Container {
	limit := v1.ResourceList{v1.ResourceMemory: resource.MustParse("32Mi")}
	c := busybox("hog", `echo allocating; x=$(head -c 67108864 /dev/zero | tr "\0" a); echo "allocated ${#x} bytes"`)
	c.Resources = v1.ResourceRequirements{Limits: limit, Requests: limit}
	return c
}

// isOOMKilled reports whether a terminated state is the OOM killer's, as the kubelet reports it.
func isOOMKilled(st v1.ContainerState) bool {
	return st.Terminated != nil && st.Terminated.Reason == "OOMKilled" && st.Terminated.ExitCode == 137
}

// startOOMPod creates, in a namespace of its own, a pod whose only container goes over its
// memory limit, under the restart policy; it returns the namespace.
func startOOMPod(t *testing.T, name string, policy v1.RestartPolicy) string {
	t.Helper()
	ns := newNamespace(t)
	pod := basePod(name, oomContainer())
	pod.Spec.RestartPolicy = policy
	createPod(t, ns, pod)
	return ns
}

// A container over its memory limit is killed by the OOM killer: terminated with reason
// OOMKilled and exit code 137; restartPolicy decides what follows (Never: the pod fails;
// OnFailure: it is restarted, the OOM kill kept as its last state).
func TestLifecycleOOMKilled(t *testing.T) {
	t.Run("Never", func(t *testing.T) {
		t.Parallel()
		ns := startOOMPod(t, "oom-never", v1.RestartPolicyNever)
		p := waitPod(t, ns, "oom-never", 90*time.Second, "pod Failed", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodFailed })
		cs, ok := containerStatus(p, "hog")
		if !ok || !isOOMKilled(cs.State) {
			t.Fatalf("want terminated OOMKilled 137, got %s", describeStatus(p))
		}
		if cs.RestartCount != 0 {
			t.Errorf("restartCount = %d under Never", cs.RestartCount)
		}
		if ready := podCondition(p, v1.PodReady); ready == nil || ready.Reason != "PodFailed" {
			t.Errorf("Ready condition = %+v, want reason PodFailed", ready)
		}
	})
	t.Run("OnFailure", func(t *testing.T) {
		t.Parallel()
		ns := startOOMPod(t, "oom-onfailure", v1.RestartPolicyOnFailure)
		// CrashLoopBackOff shows, as with the kubelet, only from a back-off's end to the restart:
		// every version of the pod the API holds is looked at, not one every so often.
		w := watchPod(t, ns, "oom-onfailure")
		p := waitPod(t, ns, "oom-onfailure", 90*time.Second, "a restart after the OOM kill", func(p *v1.Pod) bool {
			cs, ok := containerStatus(p, "hog")
			return ok && cs.RestartCount >= 1 && isOOMKilled(cs.LastTerminationState)
		})
		if p.Status.Phase != v1.PodRunning && p.Status.Phase != v1.PodPending {
			t.Errorf("phase %s while the container is restarted, want Running", p.Status.Phase)
		}
		// Killed again and again: CrashLoopBackOff, never a terminal phase.
		p = w.waitFor(t, 90*time.Second, "CrashLoopBackOff", func(p *v1.Pod) bool {
			cs, ok := containerStatus(p, "hog")
			return ok && cs.State.Waiting != nil && cs.State.Waiting.Reason == "CrashLoopBackOff" && isOOMKilled(cs.LastTerminationState)
		})
		if p.Status.Phase == v1.PodFailed || p.Status.Phase == v1.PodSucceeded {
			t.Errorf("phase %s under OnFailure", p.Status.Phase)
		}
	})
}
