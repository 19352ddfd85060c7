//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/wait"
)

// The volumes of a pod that ends Failed without being deleted (its active deadline passed, or
// it was evicted) are unmounted once it has terminated, as the kubelet's SyncTerminatedPod does
// for every terminated pod: its Secret and memory-backed emptyDir were tmpfs mounts under the
// node's root dir, and none is left.

// tmpfsVolumesPod is a pod whose container "c" runs script with a Secret volume and a
// memory-backed emptyDir (two tmpfs mounts on the node), plus the given volumes.
func tmpfsVolumesPod(t *testing.T, ns, name, script string, extra ...v1.Volume) *v1.Pod {
	t.Helper()
	createSecret(t, ns, "creds", map[string]string{"token": "not-really-secret"})
	mounts := []v1.VolumeMount{{Name: "secret", MountPath: "/etc/secret"}, {Name: "mem", MountPath: "/mem"}}
	for _, v := range extra {
		mounts = append(mounts, v1.VolumeMount{Name: v.Name, MountPath: "/" + v.Name})
	}
	pod := basePod(name, busyboxWith("c", script, mounts...))
	pod.Spec.Volumes = append([]v1.Volume{
		{Name: "secret", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "creds"}}},
		{Name: "mem", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory}}},
	}, extra...)
	return pod
}

// mountsUnder reads /proc/self/mountinfo: the mount points below prefix, with their file system
// types.
func mountsUnder(t *testing.T, prefix string) map[string]string {
	t.Helper()
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options [optional...] - fstype source superoptions
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 || !strings.HasPrefix(fields[4], prefix) {
			continue
		}
		fstype := ""
		for i, f := range fields {
			if f == "-" && i+1 < len(fields) {
				fstype = fields[i+1]
				break
			}
		}
		out[fields[4]] = fstype
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// tmpfsCount is how many of the mounts are tmpfs.
func tmpfsCount(m map[string]string) int {
	n := 0
	for _, fstype := range m {
		if fstype == "tmpfs" {
			n++
		}
	}
	return n
}

// checkVolumesMountedThenGone checks that the running pod has its two tmpfs volumes mounted under
// its directory, waits for it to fail with reason, then for its mounts to be gone.
func checkVolumesMountedThenGone(t *testing.T, ns string, pod *v1.Pod, reason string, failWithin time.Duration) {
	t.Helper()
	dir := hostPodDir(t, pod.UID) + "/"
	waitPod(t, ns, pod.Name, time.Minute, "Running", isPhase(v1.PodRunning))
	if n := tmpfsCount(mountsUnder(t, dir)); n < 2 {
		t.Fatalf("running pod has %d tmpfs mounts under %s, want its Secret and memory emptyDir: %v", n, dir, mountsUnder(t, dir))
	}
	p := waitPod(t, ns, pod.Name, failWithin, "Failed", isPhase(v1.PodFailed))
	if p.Status.Reason != reason {
		t.Errorf("status reason %q, want %q", p.Status.Reason, reason)
	}
	failed := time.Now()
	var left map[string]string
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		left = mountsUnder(t, dir)
		return len(left) == 0, nil
	})
	if err != nil {
		t.Fatalf("%v after the pod was Failed (%s), its mounts are still there: %v", time.Since(failed).Round(time.Second), reason, left)
	}
	t.Logf("mounts gone %v after the pod was Failed (%s)", time.Since(failed).Round(time.Millisecond), reason)
}

func TestTerminationUnmountsVolumesOfDeadlineExceededPod(t *testing.T) {
	ns := newNamespace(t)
	pod := tmpfsVolumesPod(t, ns, "deadline-volumes", trapAndSleep)
	deadline := int64(5)
	pod.Spec.ActiveDeadlineSeconds = &deadline
	created := createPod(t, ns, pod)
	checkVolumesMountedThenGone(t, ns, created, "DeadlineExceeded", time.Minute)
}

func TestTerminationUnmountsVolumesOfEvictedPod(t *testing.T) {
	ns := newNamespace(t)
	// The eviction manager evicts a pod whose disk emptyDir goes over its sizeLimit
	// (TestVolumeEmptyDirSizeLimitEvicts): volumes are measured once a minute.
	limit := resource.MustParse("1Mi")
	scratch := v1.Volume{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{SizeLimit: &limit}}}
	pod := tmpfsVolumesPod(t, ns, "evicted-volumes",
		"dd if=/dev/zero of=/scratch/fill bs=1024 count=4096 2>/dev/null; echo filled; "+trapAndSleep, scratch)
	created := createPod(t, ns, pod)
	checkVolumesMountedThenGone(t, ns, created, "Evicted", 3*time.Minute)
}
