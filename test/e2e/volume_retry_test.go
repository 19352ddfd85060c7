//go:build e2e

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// failedMountCount is the count of the pod's FailedMount event with that message (0: none yet).
func failedMountCount(ctx context.Context, ns, pod, msg string) int32 {
	evs, err := s.kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + pod})
	if err != nil {
		return -1
	}
	var n int32
	for _, e := range evs.Items {
		if e.Reason == "FailedMount" && e.Message == msg {
			n += max(e.Count, 1)
		}
	}
	return n
}

// TestVolumeMissingSecretRetriesOnTheKubeletsSchedule: a secret volume whose Secret is missing is
// tried as the kubelet tries it (again after 0.5, 1, 2, 4, 8 s ..., one FailedMount per failed
// attempt: 5 in the first 12 s), and a Secret created meanwhile is mounted at the next attempt
// (here the one 15.5 s after the first), not at once.
func TestVolumeMissingSecretRetriesOnTheKubeletsSchedule(t *testing.T) {
	ns := newNamespace(t)
	pod := basePod("retry", busyboxWith("c", "cat /s/k; echo; sleep 3600", v1.VolumeMount{Name: "s", MountPath: "/s"}))
	pod.Spec.Volumes = []v1.Volume{{Name: "s", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "later"}}}}
	createPod(t, ns, pod)
	msg := `MountVolume.SetUp failed for volume "s" : secret "later" not found`

	// Follow the event's count and note when each attempt was seen.
	var seen []time.Duration
	var first time.Time
	var last int32
	observe := func(until time.Duration) {
		t.Helper()
		_ = wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			n := failedMountCount(ctx, ns, "retry", msg)
			if n > last {
				if first.IsZero() {
					first = time.Now()
				}
				for ; last < n; last++ {
					seen = append(seen, time.Since(first).Round(100*time.Millisecond))
				}
			}
			return !first.IsZero() && time.Since(first) >= until, nil
		})
		if first.IsZero() {
			t.Fatalf("no FailedMount event %q", msg)
		}
	}
	observe(12 * time.Second)
	t.Logf("FailedMount attempts seen at %v after the first (kubelet: 0 0.5 1.5 3.5 7.5 15.5 ... s)", seen)
	if last != 5 {
		t.Fatalf("%d FailedMount attempts in the first 12 s (seen at %v), want 5 as the kubelet's back-off makes them", last, seen)
	}

	createSecret(t, ns, "later", map[string]string{"k": "arrived"})
	created := time.Since(first)
	waitPod(t, ns, "retry", time.Minute, "Running", isPhase(v1.PodRunning))
	running := time.Since(first)
	t.Logf("secret created %v after the first attempt, pod seen Running %v after it (kubelet: at its next attempt, 15.5 s)", created.Round(100*time.Millisecond), running.Round(100*time.Millisecond))
	// Seen late under load is possible, seen early is not: an immediate mount would show about
	// 12 s, the next attempt shows from 15.5 s on.
	if running < 14500*time.Millisecond {
		t.Errorf("pod Running %v after the first attempt, want no earlier than the next attempt (15.5 s)", running.Round(100*time.Millisecond))
	}
	waitLog(t, ns, "retry", "c", "arrived", 30*time.Second)
	if n := failedMountCount(ctxFor(t, 10*time.Second), ns, "retry", msg); n != 5 {
		t.Errorf("%d FailedMount attempts in all, want 5 (none after the Secret appeared)", n)
	}
}

// TestVolumeUnusedVolumeIsNotSetUp: like the kubelet, a volume no container mounts is not set up,
// so the ConfigMap it names missing does not keep the pod from running.
func TestVolumeUnusedVolumeIsNotSetUp(t *testing.T) {
	ns := newNamespace(t)
	pod := neverRestart(basePod("unused", busyboxWith("c", "echo started")))
	pod.Spec.Volumes = []v1.Volume{{Name: "cfg", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "absent"}}}}}
	created := createPod(t, ns, pod)
	waitPod(t, ns, "unused", time.Minute, "Succeeded", isPhase(v1.PodSucceeded))
	if log := podLog(t, ns, "unused", "c"); log != "started\n" {
		t.Errorf("log %q", log)
	}
	if n := failedMountCount(ctxFor(t, 10*time.Second), ns, "unused", `MountVolume.SetUp failed for volume "cfg" : configmap "absent" not found`); n != 0 {
		t.Errorf("%d FailedMount events for a volume no container mounts", n)
	}
	if _, err := os.Stat(filepath.Join(hostPodDir(t, created.UID), "volumes", "kubernetes.io~configmap", "cfg")); !os.IsNotExist(err) {
		t.Errorf("the unused volume's directory: %v, want none", err)
	}
}
