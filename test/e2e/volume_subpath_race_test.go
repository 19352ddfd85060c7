//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestVolumeSubPathSwapRace is the race of CVE-2021-25741 played by a pod against vk-cri: a
// sidecar keeps swapping the volume's subPath components while vk-cri prepares the subPath
// mounts of the pod's containers. "s1" is a symlink into the volume, swapped (atomically)
// with a symlink to "/"; "s2" is a directory, swapped with a symlink to "/". Each subPath names,
// below them, the path of a host directory holding HOST-FILE; the volume holds the same path
// with VOLUME-FILE, and both a file "f" (the host's says "host"), bound as a file subPath too.
// Whichever way the race goes, a container sees the volume's directory or is
// refused and retried: never the host's. Several pods, each with several containers
// and subPaths, race at once; the node's mount table never shows the host directory mounted.
func TestVolumeSubPathSwapRace(t *testing.T) {
	ns := newNamespace(t)
	host, err := os.MkdirTemp("/tmp", "vk-e2e-subpath-race-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(host) })
	for name, content := range map[string]string{"HOST-FILE": "host", "f": "host"} {
		if err := os.WriteFile(filepath.Join(host, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rel := strings.TrimPrefix(host, "/")

	// Between swaps the safe state holds for 10 ms more, so that most creation attempts succeed
	// and the test ends; each swap opens windows of a few milliseconds in which a subPath walk
	// meets a symlink to "/" (or a missing directory, which vk-cri then creates in the volume:
	// the swapper moves that aside, never removes it, since a bound directory that is removed
	// can no longer be mounted by the runtime and its container would not start, with the
	// kubelet as with vk-cri).
	swapper := busyboxWith("swapper", fmt.Sprintf(`set -u
cd /vol
M=%q
mkdir -p real/$M d2/$M && touch real/$M/VOLUME-FILE d2/$M/VOLUME-FILE
echo volume > real/$M/f; echo volume > d2/$M/f
ln -s real s1
mv -T d2 s2
touch /vol/ready
n=0
while :; do
  n=$((n+1)); [ $((n %% 20)) -eq 1 ] && echo "swaps $n s1=$(readlink s1) s2=$(ls -ld s2 | cut -c1)"
  ln -s / s1.n && mv -Tf s1.n s1
  ln -s real s1.n && mv -Tf s1.n s1
  if mv -T s2 d2; then
    ln -s / s2; rm -f s2
    mv -T d2 s2 || { mv -T s2 aside$n && mv -T d2 s2; }
  fi
  sleep 0.01
done`, rel), v1.VolumeMount{Name: "vol", MountPath: "/vol"})
	always := v1.ContainerRestartPolicyAlways
	swapper.RestartPolicy = &always
	// The sidecar is started once its setup is done.
	swapper.StartupProbe = &v1.Probe{
		ProbeHandler:  v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"test", "-e", "/vol/ready"}}},
		PeriodSeconds: 1, FailureThreshold: 30,
	}

	const rounds, containers = 3, 8
	check := `for d in /m1 /m2; do
  if [ -e $d/HOST-FILE ]; then echo "ESCAPED $d"; fi
  if [ -e $d/VOLUME-FILE ]; then echo "volume $d"; fi
done
for f in /f1 /f2; do
  case "$(cat $f)" in host) echo "ESCAPED $f";; volume) echo "volume $f";; esac
done
echo checked
exec sleep 3600`
	volumeSeen, refused := 0, 0
	podName := func(round int) string { return fmt.Sprintf("subpath-race-%d", round) }
	// The pods race at once: their containers' creations interleave with each other's swaps.
	for round := range rounds {
		var cs []v1.Container
		for i := range containers {
			cs = append(cs, busyboxWith(fmt.Sprintf("c%d", i), check,
				v1.VolumeMount{Name: "vol", MountPath: "/m1", SubPath: "s1/" + rel},
				v1.VolumeMount{Name: "vol", MountPath: "/m2", SubPath: "s2/" + rel},
				v1.VolumeMount{Name: "vol", MountPath: "/f1", SubPath: "s1/" + rel + "/f"},
				v1.VolumeMount{Name: "vol", MountPath: "/f2", SubPath: "s2/" + rel + "/f"},
			))
		}
		pod := basePod(podName(round), cs...)
		pod.Spec.InitContainers = []v1.Container{swapper}
		pod.Spec.Volumes = []v1.Volume{{Name: "vol", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}}
		createPod(t, ns, pod)
	}
	for round := range rounds {
		name := podName(round)
		// Creation attempts refused by the race are retried at the pod's next syncs.
		p := waitPod(t, ns, name, 4*time.Minute, "every container running", func(p *v1.Pod) bool {
			running := 0
			for _, st := range p.Status.ContainerStatuses {
				if st.State.Running != nil {
					running++
				}
			}
			return running == containers
		})
		if mounted := mountedHostDir(t, host); mounted != "" {
			t.Errorf("pod %d: the node's mount table shows the host directory mounted:\n%s", round, mounted)
		}
		for _, st := range p.Status.ContainerStatuses {
			waitLog(t, ns, name, st.Name, "checked", 30*time.Second)
			out := podLog(t, ns, name, st.Name)
			if strings.Contains(out, "ESCAPED") {
				t.Errorf("pod %d container %s saw the host's file:\n%s", round, st.Name, out)
			}
			volumeSeen += strings.Count(out, "volume ")
		}
		if data, err := os.ReadFile(filepath.Join(host, "HOST-FILE")); err != nil || string(data) != "host" {
			t.Errorf("the host file changed: %q %v", data, err)
		}
		refused += subPathRefusals(t, ns, name)
		if log := strings.TrimSpace(podLog(t, ns, name, "swapper")); log != "" {
			lines := strings.Split(log, "\n")
			t.Logf("pod %d swapper: %s", round, lines[len(lines)-1])
		}
	}
	for round := range rounds {
		deletePodAndWait(t, ns, podName(round))
	}
	// The subPaths were bound to the volume, not left empty: the race is between the volume
	// and the host, and the volume side must have been seen.
	if volumeSeen == 0 {
		t.Errorf("no container saw the volume's file through its subPaths")
	}
	// How often the race was met shows in the refusals (retried); it depends on timing, so it
	// is reported, not required.
	t.Logf("%d subPath mounts showed the volume over %d pods of %d containers; %d container creations were refused by the race and retried",
		volumeSeen, rounds, containers, refused)
}

// subPathRefusals counts the pod's Failed events of containers whose subPath was refused.
func subPathRefusals(t *testing.T, ns, pod string) int {
	t.Helper()
	evs, err := s.kube.CoreV1().Events(ns).List(ctxFor(t, 30*time.Second), metav1.ListOptions{FieldSelector: "involvedObject.name=" + pod})
	if err != nil {
		t.Fatalf("events of %s: %v", pod, err)
	}
	n := 0
	for _, ev := range evs.Items {
		if ev.Reason == "Failed" && strings.Contains(ev.Message, "failed to prepare subPath") {
			n += int(max(ev.Count, 1))
		}
	}
	return n
}

// mountedHostDir returns the lines of the node's mount table that mount dir or a directory
// below it: mounts of dir's file system whose root (mountinfo's fourth field, relative to that
// file system) is dir's path in it. Bind mounts of the volume's own copy of the path do not count.
func mountedHostDir(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	type entry struct{ dev, root, point, line string }
	var entries []entry
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		entries = append(entries, entry{dev: f[2], root: f[3], point: f[4], line: line})
	}
	// The mount dir lives on: the longest mount point that contains it.
	var home *entry
	for i, e := range entries {
		if (dir == e.point || strings.HasPrefix(dir, strings.TrimSuffix(e.point, "/")+"/")) && (home == nil || len(e.point) >= len(home.point)) {
			home = &entries[i]
		}
	}
	if home == nil {
		t.Fatalf("no mount holds %s", dir)
	}
	want := filepath.Join(home.root, strings.TrimPrefix(dir, home.point))
	var out []string
	for _, e := range entries {
		if e.dev == home.dev && (e.root == want || strings.HasPrefix(e.root, want+"/")) {
			out = append(out, e.line)
		}
	}
	return strings.Join(out, "\n")
}
