//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"context"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// A pod force-deleted from the API while vk-cri is down is an orphan when vk-cri comes back: its
// containers are still in the runtime, its spec is gone. The kubelet v1.37 kills such a pod
// through a stand-in made of the runtime's names (SyncTerminatingRuntimePod): a 1 s grace period
// override, so each container gets the 2 s minimum between SIGTERM and SIGKILL, no preStop hook
// (the stand-in has none; the hook annotations are read back only by the container garbage
// collector for containers in an unknown state), and a Killing event per container. vk-cri does
// the same: the pod's 30 s grace period and its preStop hook are not used.
func TestLifecycleOrphanPreStop(t *testing.T) {
	ns := newNamespace(t)
	marker := filepath.Join(os.TempDir(), "vk-cri-e2e-"+ns)
	t.Cleanup(func() { _ = os.RemoveAll(marker) })
	dirOrCreate := v1.HostPathDirectoryOrCreate
	grace := int64(30)
	pod := basePod("orphan", v1.Container{
		Name:  "c",
		Image: image("busybox:latest"),
		// PID 1 without a SIGTERM handler: only SIGKILL ends it.
		Command:      []string{"sleep", "3600"},
		VolumeMounts: []v1.VolumeMount{{Name: "marker", MountPath: "/marker"}},
		Lifecycle: &v1.Lifecycle{PreStop: &v1.LifecycleHandler{
			Exec: &v1.ExecAction{Command: []string{"touch", "/marker/prestop-ran"}},
		}},
	})
	pod.Spec.TerminationGracePeriodSeconds = &grace
	pod.Spec.Volumes = []v1.Volume{{Name: "marker", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: marker, Type: &dirOrCreate}}}}
	created := createPod(t, ns, pod)
	waitPod(t, ns, "orphan", 60*time.Second, "running", isRunningReady)

	// Whatever happens, the node runs again for the tests after this one.
	t.Cleanup(func() {
		_ = node("start")
		_ = node("wait-ready")
	})
	if err := node("stop"); err != nil {
		t.Fatal(err)
	}
	zero := int64(0)
	if err := s.kube.CoreV1().Pods(ns).Delete(ctxFor(t, 30*time.Second), "orphan", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatalf("force-deleting the pod: %v", err)
	}
	waitPodGone(t, ns, "orphan", 30*time.Second)
	if _, cs := runtimeObjects(t, string(created.UID)); len(cs) == 0 {
		t.Fatal("the pod's container is gone from the runtime while vk-cri was down")
	}

	if err := node("start"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := node("wait-ready"); err != nil {
		t.Fatal(err)
	}
	// With the pod's own 30 s grace period the container would outlive this deadline.
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		sbs, cs := runtimeObjects(t, string(created.UID))
		return len(sbs)+len(cs) == 0, nil
	})
	if err != nil {
		sbs, cs := runtimeObjects(t, string(created.UID))
		t.Fatalf("the orphan is still in the runtime %v after vk-cri's start: %d sandboxes, %d containers", time.Since(start), len(sbs), len(cs))
	}
	t.Logf("orphan stopped and removed %v after vk-cri's start", time.Since(start).Round(100*time.Millisecond))
	if _, err := os.Stat(filepath.Join(marker, "prestop-ran")); err == nil {
		t.Error("the orphan's preStop hook ran; the kubelet runs none for an orphan")
	}
	if msg := eventWithReason(t, ns, "orphan", "Killing"); msg != "Stopping container c" {
		t.Errorf("Killing event message %q, want %q", msg, "Stopping container c")
	}
}
