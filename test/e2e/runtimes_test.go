//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// These tests need a runtime with the handlers of the stack's containerd 2.x (or of hack/crio.sh's
// CRI-O): the default one (runc, with user namespaces and recursive read-only mounts) and "crun"
// (neither).

// runtimeClass creates a RuntimeClass (cluster-wide, named after the namespace) for the handler
// and removes it with the test.
func runtimeClass(t *testing.T, ns, handler string) string {
	t.Helper()
	name := ns + "-" + strings.ReplaceAll(handler, "_", "-")
	_, err := s.kube.NodeV1().RuntimeClasses().Create(ctxFor(t, 30*time.Second),
		&nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Handler: handler}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating RuntimeClass for %q: %v", handler, err)
	}
	t.Cleanup(func() {
		_ = s.kube.NodeV1().RuntimeClasses().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return name
}

// needsContainerd2 skips a test on a runtime without the crun handler (the 1.6 lane).
func needsContainerd2(t *testing.T) *v1.Node {
	t.Helper()
	n, err := s.kube.CoreV1().Nodes().Get(ctxFor(t, 30*time.Second), nodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(n.Status.NodeInfo.ContainerRuntimeVersion, "containerd://2.") {
		t.Skipf("runtime %s: these tests need the stack's containerd 2.x", n.Status.NodeInfo.ContainerRuntimeVersion)
	}
	return n
}

// needsCrunHandler skips a test on a runtime without the crun handler (the 1.6 lane).
func needsCrunHandler(t *testing.T) *v1.Node {
	t.Helper()
	if onCRIO() {
		n, err := s.kube.CoreV1().Nodes().Get(ctxFor(t, 30*time.Second), nodeName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	return needsContainerd2(t)
}

// The node reports the runtime's handlers with their features and the runtime's features, as
// the kubelet does on the same runtime (node ref; on CRI-O, ref-crio reported the same three
// handlers and features, in CRI-O's map order).
func TestRuntimesNodeReportsHandlersAndFeatures(t *testing.T) {
	var n *v1.Node
	err := wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		n = needsCrunHandler(t)
		return len(n.Status.RuntimeHandlers) > 0, nil
	})
	if err != nil {
		t.Fatalf("node reports no runtimeHandlers: %+v", n.Status)
	}
	got := map[string][2]bool{}
	for _, h := range n.Status.RuntimeHandlers {
		if h.Features == nil || h.Features.RecursiveReadOnlyMounts == nil || h.Features.UserNamespaces == nil {
			t.Errorf("handler %q: features not spelled out: %+v", h.Name, h.Features)
			continue
		}
		got[h.Name] = [2]bool{*h.Features.RecursiveReadOnlyMounts, *h.Features.UserNamespaces}
	}
	for name, want := range map[string][2]bool{"": {true, true}, "runc": {true, true}, "crun": {false, false}} {
		if g, ok := got[name]; !ok || g != want {
			t.Errorf("handler %q: [recursiveReadOnlyMounts userNamespaces] = %v (listed %v), want %v", name, g, ok, want)
		}
	}
	if f := n.Status.Features; f == nil || f.SupplementalGroupsPolicy == nil || !*f.SupplementalGroupsPolicy {
		t.Errorf("status.features = %+v, want supplementalGroupsPolicy true", f)
	}
}

// A pod whose RuntimeClass names the crun handler runs under crun: its sandbox has that handler
// and its container's OCI runtime, in CRI's verbose info, is the crun binary.
func TestRuntimeClassCrunRunsUnderCrun(t *testing.T) {
	needsContainerd2(t)
	ns := newNamespace(t)
	pod := basePod("crun", busybox("main", "echo started; sleep 3600"))
	pod.Spec.RuntimeClassName = ptr(runtimeClass(t, ns, "crun"))
	createPod(t, ns, pod)
	p := waitPod(t, ns, "crun", 2*time.Minute, "Running", isRunningReady)
	sbs, cs := runtimeObjects(t, string(p.UID))
	if len(sbs) != 1 || sbs[0].RuntimeHandler != "crun" {
		t.Fatalf("sandboxes %v, want one with runtime handler crun", sbs)
	}
	if len(cs) != 1 {
		t.Fatalf("containers %v, want one", cs)
	}
	resp, err := s.runtime.Runtime.ContainerStatus(ctxFor(t, 30*time.Second), cs[0].Id, true)
	if err != nil {
		t.Fatal(err)
	}
	var info struct {
		RuntimeOptions struct {
			BinaryName string `json:"binary_name"`
		} `json:"runtimeOptions"`
		Pid int `json:"pid"`
	}
	if err := json.Unmarshal([]byte(resp.Info["info"]), &info); err != nil {
		t.Fatalf("verbose info: %v\n%s", err, resp.Info["info"])
	}
	if filepath.Base(info.RuntimeOptions.BinaryName) != "crun" {
		t.Errorf("OCI runtime binary %q, want crun's", info.RuntimeOptions.BinaryName)
	}
	// And not runc's state: the container is in crun's state directory.
	if _, err := os.Stat(filepath.Join(s.env["STACK_DIR"], "containerd-vk", "state", "crun", "k8s.io", cs[0].Id)); err != nil {
		t.Errorf("container not in crun's state directory: %v", err)
	}
}

// A RuntimeClass naming a handler the runtime does not have: the sandbox is never made, with the
// kubelet's FailedCreatePodSandBox event carrying the runtime's words, tried again after the
// back-off; the container waits in ContainerCreating.
func TestRuntimeClassUnknownHandler(t *testing.T) {
	needsContainerd2(t)
	ns := newNamespace(t)
	pod := basePod("unknown", busybox("main", "sleep 3600"))
	pod.Spec.RuntimeClassName = ptr(runtimeClass(t, ns, "nonexistent-handler"))
	createPod(t, ns, pod)
	ev := waitEvent(t, ns, "unknown", "FailedCreatePodSandBox", `no runtime for "nonexistent-handler" is configured`, time.Minute)
	if !strings.HasPrefix(ev.Message, "Failed to create pod sandbox: rpc error: code = Unknown desc = ") {
		t.Errorf("event message %q, want the kubelet's form", ev.Message)
	}
	// Retried: the event repeats after the back-off (10 s).
	err := wait.PollUntilContextTimeout(context.Background(), time.Second, 45*time.Second, true, func(ctx context.Context) (bool, error) {
		evs, err := s.kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=unknown,reason=FailedCreatePodSandBox"})
		if err != nil {
			return false, nil
		}
		var n int32
		for _, e := range evs.Items {
			n += max(e.Count, 1)
		}
		return n >= 2, nil
	})
	if err != nil {
		t.Errorf("no second FailedCreatePodSandBox: the sandbox is not retried")
	}
	p, err := s.kube.CoreV1().Pods(ns).Get(ctxFor(t, 30*time.Second), "unknown", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := waitingReason(p, "main"); r != "ContainerCreating" || p.Status.Phase != v1.PodPending {
		t.Errorf("pod %s, container waiting %q; want Pending, ContainerCreating", p.Status.Phase, r)
	}
	if sbs, _ := runtimeObjects(t, string(p.UID)); len(sbs) != 0 {
		t.Errorf("sandboxes %v, want none", sbs)
	}
}

// hostUsers: false on the default handler: the pod's processes run in a user namespace of their
// own (a non-identity uid_map of 65536 IDs, persisted in the pod's directory) and its root can
// read its secret and write its emptyDir through idmapped mounts. The same pod under crun, which
// has no user namespaces, is refused with the kubelet's words and never runs.
func TestUserNamespacePod(t *testing.T) {
	needsContainerd2(t)
	ns := newNamespace(t)
	if _, err := s.kube.CoreV1().Secrets(ns).Create(ctxFor(t, 30*time.Second), &v1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "creds"}, StringData: map[string]string{"key": "s3cr3t"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	script := `echo "uid_map: $(cat /proc/self/uid_map | tr -s ' ' | sed 's/^ //')"
echo "uid: $(id -u)"
echo "secret: $(cat /creds/key)"
echo hello > /scratch/f && echo "emptydir: $(cat /scratch/f)"
sleep 3600`
	mk := func(name string) *v1.Pod {
		pod := basePod(name, busybox("main", script))
		pod.Spec.HostUsers = ptr(false)
		pod.Spec.Volumes = []v1.Volume{
			{Name: "creds", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "creds"}}},
			{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
		}
		pod.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "creds", MountPath: "/creds", ReadOnly: true}, {Name: "scratch", MountPath: "/scratch"}}
		return pod
	}
	refused := mk("userns-crun")
	refused.Spec.RuntimeClassName = ptr(runtimeClass(t, ns, "crun"))
	createPod(t, ns, refused)
	createPod(t, ns, mk("userns"))

	p := waitPod(t, ns, "userns", 2*time.Minute, "Running", isRunningReady)
	var out string
	err := wait.PollUntilContextTimeout(context.Background(), 300*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		out = podLogs(t, ns, "userns", "main")
		return strings.Contains(out, "emptydir:"), nil
	})
	if err != nil {
		t.Fatalf("the container did not get through its script:\n%s", out)
	}
	fields := strings.Fields(fieldOf(out, "uid_map"))
	if len(fields) != 3 || fields[0] != "0" || fields[2] != "65536" {
		t.Fatalf("uid_map %q, want 0 <host id> 65536\n%s", fieldOf(out, "uid_map"), out)
	}
	hostID, _ := strconv.ParseUint(fields[1], 10, 32)
	if hostID == 0 || hostID%65536 != 0 {
		t.Errorf("host ID %d: want a non-zero multiple of 65536", hostID)
	}
	for field, want := range map[string]string{"uid": "0", "secret": "s3cr3t", "emptydir": "hello"} {
		if got := fieldOf(out, field); got != want {
			t.Errorf("%s = %q, want %q\n%s", field, got, want, out)
		}
	}
	// The range is persisted where the kubelet keeps it, as the kubelet writes it.
	b, err := os.ReadFile(filepath.Join(hostPodDir(t, p.UID), "userns"))
	if err != nil {
		t.Fatalf("persisted user namespace: %v", err)
	}
	var persisted struct {
		UIDMappings []struct {
			HostID uint64 `json:"hostId"`
		} `json:"uidMappings"`
	}
	if err := json.Unmarshal(b, &persisted); err != nil || len(persisted.UIDMappings) != 1 || persisted.UIDMappings[0].HostID != hostID {
		t.Errorf("persisted %s (%v), want the host ID %d", b, err, hostID)
	}

	waitEvent(t, ns, "userns-crun", "FailedCreatePodSandBox",
		"Failed to create pod sandbox: can't set `spec.hostUsers: false`, RuntimeClass handler \"crun\" does not support user namespaces", time.Minute)
	if q, err := s.kube.CoreV1().Pods(ns).Get(ctxFor(t, 30*time.Second), "userns-crun", metav1.GetOptions{}); err == nil {
		if sbs, _ := runtimeObjects(t, string(q.UID)); len(sbs) != 0 {
			t.Errorf("the refused pod has sandboxes %v", sbs)
		}
	}

	// Deleted, the pod's range is freed with its directory.
	if err := s.kube.CoreV1().Pods(ns).Delete(ctxFor(t, 30*time.Second), "userns", metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(1))}); err != nil {
		t.Fatal(err)
	}
	waitPodGone(t, ns, "userns", time.Minute)
	if _, err := os.Stat(filepath.Join(hostPodDir(t, p.UID), "userns")); !os.IsNotExist(err) {
		t.Errorf("user namespace file after the pod's removal: %v, want gone", err)
	}
}

// recursiveReadOnly: Enabled makes a submount of the volume read-only too, where a plain
// read-only mount of the same directory leaves the submount writable; the status says which
// mount is recursively read-only. Under crun, which cannot, Enabled is refused with the kubelet's
// CreateContainerConfigError and IfPossible falls back to a plain read-only mount.
func TestRecursiveReadOnlySubmount(t *testing.T) {
	needsContainerd2(t)
	ns := newNamespace(t)
	hostDir := filepath.Join(nodeRootDir(t), "e2e-rro-"+ns)
	if err := os.MkdirAll(filepath.Join(hostDir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("e2e-rro", filepath.Join(hostDir, "sub"), "tmpfs", 0, "size=1m"); err != nil {
		t.Fatalf("mounting the submount: %v", err)
	}
	t.Cleanup(func() {
		unmountAllUnder(t, hostDir)
		_ = os.RemoveAll(hostDir)
	})
	vol := v1.Volume{Name: "host", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: hostDir}}}
	mode := func(m v1.RecursiveReadOnlyMode) *v1.RecursiveReadOnlyMode { return &m }
	script := `for d in rro plain; do touch /$d/sub/probe 2>/dev/null && echo "$d-sub: writable" || echo "$d-sub: read-only"; touch /$d/top 2>/dev/null && echo "$d-top: writable" || echo "$d-top: read-only"; done; sleep 3600`
	c := busybox("main", script)
	c.VolumeMounts = []v1.VolumeMount{
		{Name: "host", MountPath: "/rro", ReadOnly: true, RecursiveReadOnly: mode(v1.RecursiveReadOnlyEnabled)},
		{Name: "host", MountPath: "/plain", ReadOnly: true},
	}
	pod := basePod("rro", c)
	pod.Spec.Volumes = []v1.Volume{vol}
	createPod(t, ns, pod)

	crunEnabled := busybox("main", "sleep 3600")
	crunEnabled.VolumeMounts = []v1.VolumeMount{{Name: "host", MountPath: "/rro", ReadOnly: true, RecursiveReadOnly: mode(v1.RecursiveReadOnlyEnabled)}}
	crunPod := basePod("rro-crun", crunEnabled)
	crunPod.Spec.Volumes = []v1.Volume{vol}
	crunPod.Spec.RuntimeClassName = ptr(runtimeClass(t, ns, "crun"))
	createPod(t, ns, crunPod)

	p := waitPod(t, ns, "rro", 2*time.Minute, "Running", isRunningReady)
	var out string
	err := wait.PollUntilContextTimeout(context.Background(), 300*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		out = podLogs(t, ns, "rro", "main")
		return strings.Contains(out, "plain-top:"), nil
	})
	if err != nil {
		t.Fatalf("no output:\n%s", out)
	}
	for field, want := range map[string]string{"rro-sub": "read-only", "rro-top": "read-only", "plain-sub": "writable", "plain-top": "read-only"} {
		if got := fieldOf(out, field); got != want {
			t.Errorf("%s: %q, want %q\n%s", field, got, want, out)
		}
	}
	wantStatus := map[string]v1.RecursiveReadOnlyMode{"/rro": v1.RecursiveReadOnlyEnabled, "/plain": v1.RecursiveReadOnlyDisabled}
	for _, vm := range p.Status.ContainerStatuses[0].VolumeMounts {
		if vm.RecursiveReadOnly == nil || *vm.RecursiveReadOnly != wantStatus[vm.MountPath] {
			t.Errorf("status volumeMount %s: recursiveReadOnly %v, want %s", vm.MountPath, vm.RecursiveReadOnly, wantStatus[vm.MountPath])
		}
	}
	_, cs := runtimeObjects(t, string(p.UID))
	if len(cs) == 1 {
		resp, err := s.runtime.Runtime.ContainerStatus(ctxFor(t, 30*time.Second), cs[0].Id, false)
		if err == nil {
			for _, m := range resp.Status.Mounts {
				if want := m.ContainerPath == "/rro"; m.RecursiveReadOnly != want && (m.ContainerPath == "/rro" || m.ContainerPath == "/plain") {
					t.Errorf("CRI mount %s: recursiveReadOnly %v, want %v", m.ContainerPath, m.RecursiveReadOnly, want)
				}
			}
		}
	}

	want := `failed to resolve recursive read-only mode: volume "host" requested recursive read-only mode, but it is not supported by the runtime`
	q := waitPod(t, ns, "rro-crun", time.Minute, "CreateContainerConfigError", func(p *v1.Pod) bool {
		r, m := waitingReason(p, "main")
		return r == "CreateContainerConfigError" && m == want
	})
	if st := q.Status.ContainerStatuses[0].VolumeMounts; len(st) != 1 || st[0].RecursiveReadOnly == nil || *st[0].RecursiveReadOnly != v1.RecursiveReadOnlyDisabled {
		t.Errorf("refused container's volumeMounts status %+v, want Disabled", st)
	}
}
