//go:build e2e

package e2e

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// TestVolumeSubPathMissingDirModeAndOwnerWithFSGroup is the NodeConformance spec "EmptyDir
// volumes when FSGroup is specified ... nonexistent volume subPath should have the correct mode
// and owner using FSGroup": a subPath that does not exist yet is created with the volume's whole
// mode (on tmpfs: setgid for the fsGroup and tmpfs's sticky bit), owned by root and the fsGroup,
// and a non-root container sees it so.
func TestVolumeSubPathMissingDirModeAndOwnerWithFSGroup(t *testing.T) {
	ns := newNamespace(t)
	for _, tc := range []struct {
		name   string
		medium v1.StorageMedium
		want   []string
	}{
		{"tmpfs", v1.StorageMediumMemory, []string{"drwxrwsrwt 0 123", "fstype tmpfs"}},
		{"disk", v1.StorageMediumDefault, []string{"drwxrwsrwx 0 123"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := "subpath-" + tc.name
			c := busyboxWith("c", `stat -c '%A %u %g' /test-volume; echo "fstype $(grep ' /test-volume ' /proc/mounts | cut -d' ' -f3)"; id -u`,
				v1.VolumeMount{Name: "vol", MountPath: "/test-volume", SubPath: "test-sub"})
			pod := neverRestart(basePod(name, c))
			uid, group := int64(1001), int64(123)
			pod.Spec.SecurityContext = &v1.PodSecurityContext{RunAsUser: &uid, FSGroup: &group}
			pod.Spec.Volumes = []v1.Volume{{Name: "vol", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: tc.medium}}}}
			createPod(t, ns, pod)
			p := waitPod(t, ns, name, time.Minute, "finished", func(p *v1.Pod) bool {
				return p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed
			})
			log := podLog(t, ns, name, "c")
			if p.Status.Phase != v1.PodSucceeded {
				t.Fatalf("pod %s: %s\n%s", p.Status.Phase, describeStatus(p), log)
			}
			for _, want := range append(tc.want, "1001") {
				if !strings.Contains(log, want) {
					t.Errorf("log lacks %q:\n%s", want, log)
				}
			}
		})
	}
}
