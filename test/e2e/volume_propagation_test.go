//go:build e2e

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// nodeRootDir is the node's --root-dir as the mount table shows it.
func nodeRootDir(t *testing.T) string {
	t.Helper()
	return filepath.Dir(filepath.Dir(hostPodDir(t, "x")))
}

// unmountAllUnder unmounts every mount below dir on the host, deepest first.
func unmountAllUnder(t *testing.T, dir string) {
	t.Helper()
	for {
		var deepest string
		for mp := range hostMounts(t, dir+"/") {
			if len(mp) > len(deepest) {
				deepest = mp
			}
		}
		if deepest == "" {
			return
		}
		if err := unix.Unmount(deepest, unix.MNT_DETACH); err != nil {
			t.Errorf("unmounting %s: %v", deepest, err)
			return
		}
	}
}

// lastLine is the last complete line of the container's log that starts with prefix.
func lastLine(t *testing.T, ns, pod, container, prefix string) string {
	t.Helper()
	var last string
	for _, l := range strings.Split(podLog(t, ns, pod, container), "\n") {
		if strings.HasPrefix(l, prefix) {
			last = l
		}
	}
	return last
}

// TestVolumeMountPropagation follows the upstream e2e "Mount propagation" test: three privileged
// pods mount one hostPath below the node's root dir (which vk-cri makes shared, as the kubelet
// does with its own) with propagation None, HostToContainer and Bidirectional; each mounts a tmpfs
// of its own below it, and the host mounts one after the containers started. Only the
// Bidirectional pod's mount reaches the host, and only HostToContainer and Bidirectional
// containers see the host's mounts.
func TestVolumeMountPropagation(t *testing.T) {
	ns := newNamespace(t)
	hostDir := filepath.Join(nodeRootDir(t), "e2e-propagation-"+ns)
	if err := os.MkdirAll(hostDir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		unmountAllUnder(t, hostDir)
		_ = os.RemoveAll(hostDir)
	})
	modes := map[string]v1.MountPropagationMode{
		"none": v1.MountPropagationNone,
		"h2c":  v1.MountPropagationHostToContainer,
		"bidi": v1.MountPropagationBidirectional,
	}
	script := `mkdir -p /mnt/test/$NAME && mount -t tmpfs e2e-$NAME /mnt/test/$NAME && echo $NAME > /mnt/test/$NAME/file && echo mounted
trap 'umount /mnt/test/$NAME; exit 0' TERM
while true; do printf 'sees:'; for d in host none h2c bidi; do [ -f /mnt/test/$d/file ] && printf " $d"; done; echo; sleep 0.2; done`
	yes := true
	start := func(name string) {
		mode := modes[name]
		c := busyboxWith("c", script, v1.VolumeMount{Name: "host", MountPath: "/mnt/test", MountPropagation: &mode})
		c.Env = []v1.EnvVar{{Name: "NAME", Value: name}}
		c.SecurityContext = &v1.SecurityContext{Privileged: &yes}
		pod := basePod(name, c)
		dir := v1.HostPathDirectory
		pod.Spec.Volumes = []v1.Volume{{Name: "host", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: hostDir, Type: &dir}}}}
		createPod(t, ns, pod)
		waitLog(t, ns, name, "c", "mounted", time.Minute)
	}
	// Propagation settings act on mounts made after a container started (a container started
	// later gets a copy of what is mounted then): the Bidirectional pod mounts last.
	for _, name := range []string{"none", "h2c", "bidi"} {
		start(name)
	}

	// A mount made on the host after the containers started.
	hostMount := filepath.Join(hostDir, "host")
	if err := os.Mkdir(hostMount, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("e2e-host", hostMount, "tmpfs", 0, ""); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hostMount, "file"), []byte("host\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mounted := time.Now()
	waitLog(t, ns, "h2c", "c", "sees: host h2c bidi\n", 30*time.Second)
	waitLog(t, ns, "bidi", "c", "sees: host bidi\n", 30*time.Second)
	t.Logf("host mount seen by the HostToContainer container %v after it was made", time.Since(mounted).Round(10*time.Millisecond))
	// Mount propagation is synchronous: what None would see, it sees by now; judge from two fresh lines.
	before := strings.Count(podLog(t, ns, "none", "c"), "\n")
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return strings.Count(podLog(t, ns, "none", "c"), "\n") >= before+2, nil
	})
	if err != nil {
		t.Fatal("the None container stopped logging")
	}
	if got := lastLine(t, ns, "none", "c", "sees:"); got != "sees: none" {
		t.Errorf("None container: %q, want %q (neither the host's nor the Bidirectional pod's mount)", got, "sees: none")
	}
	for name, want := range map[string]string{"h2c": "sees: host h2c bidi", "bidi": "sees: host bidi"} {
		if got := lastLine(t, ns, name, "c", "sees:"); got != want {
			t.Errorf("%s container: %q, want %q", name, got, want)
		}
	}
	// On the host: only the Bidirectional container's mount came back.
	for name, want := range map[string]bool{"none": false, "h2c": false, "bidi": true} {
		_, err := os.Stat(filepath.Join(hostDir, name, "file"))
		if got := err == nil; got != want {
			t.Errorf("host sees %s's mount: %v, want %v", name, got, want)
		}
	}

	// Bidirectional is for privileged containers only: the API server refuses the pod (the
	// kubelet never sees one).
	bidi := v1.MountPropagationBidirectional
	plain := basePod("bidi-unprivileged", busyboxWith("c", "true", v1.VolumeMount{Name: "host", MountPath: "/mnt/test", MountPropagation: &bidi}))
	plain.Spec.Volumes = []v1.Volume{{Name: "host", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: hostDir}}}}
	_, err = s.kube.CoreV1().Pods(ns).Create(ctxFor(t, 10*time.Second), plain, metav1.CreateOptions{})
	if want := "Bidirectional mount propagation is available only to privileged containers"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("unprivileged Bidirectional pod: %v, want an error with %q", err, want)
	}

	for name := range modes {
		deletePodAndWait(t, ns, name)
	}
	// The Bidirectional container unmounted its tmpfs when it stopped: the host's copy went too.
	if _, err := os.Stat(filepath.Join(hostDir, "bidi", "file")); !os.IsNotExist(err) {
		t.Errorf("the Bidirectional container's mount is still on the host after it stopped: %v", err)
	}
}
