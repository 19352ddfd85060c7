//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
)

// ---- helpers of the volume tests ----

// busyboxWith is a busybox script container with volume mounts.
func busyboxWith(name, script string, mounts ...v1.VolumeMount) v1.Container {
	c := busybox(name, script)
	c.VolumeMounts = mounts
	return c
}

func podLog(t *testing.T, ns, pod, container string) string {
	t.Helper()
	b, err := s.kube.CoreV1().Pods(ns).GetLogs(pod, &v1.PodLogOptions{Container: container}).Do(ctxFor(t, 20*time.Second)).Raw()
	if err != nil {
		return ""
	}
	return string(b)
}

// waitLog waits until the container's log contains want and returns when it was first seen.
func waitLog(t *testing.T, ns, pod, container, want string, timeout time.Duration) time.Time {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		last = podLog(t, ns, pod, container)
		return strings.Contains(last, want), nil
	})
	if err != nil {
		t.Fatalf("pod %s/%s container %s: %q not in the log after %v; log:\n%s", ns, pod, container, want, timeout, tail(last, 20))
	}
	return time.Now()
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// waitEvent waits for an event of the pod with that reason whose message contains want.
func waitEvent(t *testing.T, ns, pod, reason, want string, timeout time.Duration) *v1.Event {
	t.Helper()
	var found *v1.Event
	var seen []string
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		evs, err := s.kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + pod})
		if err != nil {
			return false, nil
		}
		seen = seen[:0]
		for i := range evs.Items {
			e := &evs.Items[i]
			seen = append(seen, e.Reason+": "+e.Message)
			if e.Reason == reason && strings.Contains(e.Message, want) {
				found = e
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no %s event %q for pod %s/%s; events: %v", reason, want, ns, pod, seen)
	}
	return found
}

// hostPodDir is the pod's directory on the node (the node's --root-dir is set by hack/node.sh).
func hostPodDir(t *testing.T, uid types.UID) string {
	t.Helper()
	root := filepath.Join(s.env["STACK_DIR"], "nodes", nodeName)
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	return filepath.Join(root, "pods", string(uid))
}

// hostMounts returns the mount points under prefix and their file system types.
func hostMounts(t *testing.T, prefix string) map[string]string {
	t.Helper()
	f, err := os.Open("/proc/self/mounts")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 2 && strings.HasPrefix(fields[1], prefix) {
			out[fields[1]] = fields[2]
		}
	}
	return out
}

func isPhase(phase v1.PodPhase) func(*v1.Pod) bool {
	return func(p *v1.Pod) bool { return p.Status.Phase == phase }
}

func waitingWith(container, reason string) func(*v1.Pod) bool {
	return func(p *v1.Pod) bool {
		got, _ := waitingReason(p, container)
		return got == reason
	}
}

func neverRestart(p *v1.Pod) *v1.Pod {
	p.Spec.RestartPolicy = v1.RestartPolicyNever
	return p
}

func createConfigMap(t *testing.T, ns, name string, data map[string]string) {
	t.Helper()
	_, err := s.kube.CoreV1().ConfigMaps(ns).Create(ctxFor(t, 10*time.Second), &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: data}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

func createSecret(t *testing.T, ns, name string, data map[string]string) {
	t.Helper()
	_, err := s.kube.CoreV1().Secrets(ns).Create(ctxFor(t, 10*time.Second), &v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, StringData: data}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

func i32(v int32) *int32 { return &v }

func deletePodAndWait(t *testing.T, ns, name string) {
	t.Helper()
	if err := s.kube.CoreV1().Pods(ns).Delete(ctxFor(t, 10*time.Second), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPodGone(t, ns, name, time.Minute)
}

// ---- tests ----

func TestVolumeConfigMapFilesModesLayoutAndUpdate(t *testing.T) {
	ns := newNamespace(t)
	createConfigMap(t, ns, "files", map[string]string{"app.conf": "v1", "motd": "hello"})
	script := `stat -L -c 'mode %a %n' /etc/all/app.conf /etc/some/nested/welcome.txt
ls -a /etc/all | tr '\n' ' '; echo
while true; do echo "all=` + "`cat /etc/all/app.conf`" + ` sub=` + "`cat /sub.conf`" + `"; sleep 0.1; done`
	pod := basePod("cm", busyboxWith("c", script,
		v1.VolumeMount{Name: "all", MountPath: "/etc/all"},
		v1.VolumeMount{Name: "some", MountPath: "/etc/some"},
		v1.VolumeMount{Name: "all", MountPath: "/sub.conf", SubPath: "app.conf"}))
	pod.Spec.Volumes = []v1.Volume{
		{Name: "all", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "files"}, DefaultMode: i32(0o640)}}},
		{Name: "some", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "files"},
			Items: []v1.KeyToPath{{Key: "motd", Path: "nested/welcome.txt", Mode: i32(0o400)}}}}},
	}
	created := createPod(t, ns, pod)
	waitPod(t, ns, "cm", time.Minute, "Running", isPhase(v1.PodRunning))
	waitLog(t, ns, "cm", "c", "all=v1 sub=v1", 30*time.Second)
	log := podLog(t, ns, "cm", "c")
	for _, want := range []string{"mode 640 /etc/all/app.conf", "mode 400 /etc/some/nested/welcome.txt", "..data app.conf motd"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, tail(log, 10))
		}
	}

	// On the node: the kubelet's layout, on disk (configMaps are not secret).
	dir := filepath.Join(hostPodDir(t, created.UID), "volumes", "kubernetes.io~configmap", "all")
	ts, err := os.Readlink(filepath.Join(dir, "..data"))
	if err != nil || !strings.HasPrefix(ts, "..20") {
		t.Errorf("..data -> %q (%v), want a timestamped directory", ts, err)
	}
	if target, _ := os.Readlink(filepath.Join(dir, "app.conf")); target != "..data/app.conf" {
		t.Errorf("app.conf -> %q, want ..data/app.conf", target)
	}
	if fstype, mounted := hostMounts(t, dir)[dir]; mounted {
		t.Errorf("configMap volume is a %s mount; the kubelet keeps it on disk", fstype)
	}

	cm, err := s.kube.CoreV1().ConfigMaps(ns).Get(ctxFor(t, 10*time.Second), "files", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["app.conf"] = "v2"
	updated := time.Now()
	if _, err := s.kube.CoreV1().ConfigMaps(ns).Update(ctxFor(t, 10*time.Second), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	seen := waitLog(t, ns, "cm", "c", "all=v2", 90*time.Second)
	t.Logf("configMap update propagation: %v (kubelet: up to about a minute)", seen.Sub(updated).Round(10*time.Millisecond))
	// A subPath mount is a bind of the file as it was: it does not follow updates (as with the kubelet).
	if log := podLog(t, ns, "cm", "c"); !strings.Contains(log, "all=v2 sub=v1") {
		t.Errorf("after the update the subPath file changed too:\n%s", tail(log, 5))
	}
	if ts2, _ := os.Readlink(filepath.Join(dir, "..data")); ts2 == ts {
		t.Errorf("..data still points to %s after the update", ts)
	}
}

func TestVolumeSecretOnTmpfs(t *testing.T) {
	ns := newNamespace(t)
	createSecret(t, ns, "creds", map[string]string{"token": "not-really-secret", "ca.crt": "pretend"})
	pod := neverRestart(basePod("sec", busyboxWith("c",
		`grep ' /etc/secret ' /proc/mounts | cut -d' ' -f3; stat -L -c 'mode %a %n' /etc/secret/token /etc/secret/ca.crt; cat /etc/secret/token; echo`,
		v1.VolumeMount{Name: "s", MountPath: "/etc/secret"})))
	pod.Spec.Volumes = []v1.Volume{{Name: "s", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{
		SecretName: "creds", DefaultMode: i32(0o400), Items: []v1.KeyToPath{{Key: "token", Path: "token"}, {Key: "ca.crt", Path: "ca.crt", Mode: i32(0o440)}}}}}}
	created := createPod(t, ns, pod)
	dir := filepath.Join(hostPodDir(t, created.UID), "volumes", "kubernetes.io~secret", "s")
	waitPod(t, ns, "sec", time.Minute, "Succeeded", isPhase(v1.PodSucceeded))
	log := podLog(t, ns, "sec", "c")
	for _, want := range []string{"tmpfs\n", "mode 400 /etc/secret/token", "mode 440 /etc/secret/ca.crt", "not-really-secret"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	// The secret's data never reached the node's disk: its directory was a tmpfs, unmounted once
	// the pod finished.
	if m := hostMounts(t, dir); len(m) != 0 {
		t.Errorf("finished pod still has mounts: %v", m)
	}
}

func TestVolumeEmptyDirDiskMemoryAndFSGroup(t *testing.T) {
	ns := newNamespace(t)
	createConfigMap(t, ns, "cfg", map[string]string{"k": "v"})
	script := `stat -c 'disk %a %g' /disk; stat -c 'mem %a %g' /mem
grep ' /mem ' /proc/mounts | cut -d' ' -f3,4; grep ' /limited ' /proc/mounts | cut -d' ' -f3,4
grep -c ' /disk ' /proc/mounts; stat -L -c 'cfg %a %g' /cfg/k
touch /disk/f && stat -c 'new %g' /disk/f`
	c := busyboxWith("c", script,
		v1.VolumeMount{Name: "disk", MountPath: "/disk"},
		v1.VolumeMount{Name: "mem", MountPath: "/mem"},
		v1.VolumeMount{Name: "limited", MountPath: "/limited"},
		v1.VolumeMount{Name: "cfg", MountPath: "/cfg"})
	c.Resources.Limits = v1.ResourceList{v1.ResourceMemory: resource.MustParse("64Mi")}
	pod := neverRestart(basePod("ed", c))
	group := int64(1234)
	pod.Spec.SecurityContext = &v1.PodSecurityContext{FSGroup: &group}
	sixteen := resource.MustParse("16Mi")
	pod.Spec.Volumes = []v1.Volume{
		{Name: "disk", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
		{Name: "mem", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory}}},
		{Name: "limited", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory, SizeLimit: &sixteen}}},
		{Name: "cfg", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}}}},
	}
	createPod(t, ns, pod)
	waitPod(t, ns, "ed", time.Minute, "Succeeded", isPhase(v1.PodSucceeded))
	log := podLog(t, ns, "ed", "c")
	// emptyDir: 0777 plus setgid for the fsGroup; memory-backed ones are tmpfs sized by the pod's
	// memory limit or their sizeLimit; a configMap file gets the group's read bit.
	for _, want := range []string{"disk 2777 1234", "mem 3777 1234", "tmpfs rw,", "size=65536k", "size=16384k", "cfg 644 1234", "new 1234"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}

func TestVolumeDownwardAPILabelsUpdate(t *testing.T) {
	ns := newNamespace(t)
	pod := basePod("dw", busyboxWith("c", `while true; do echo "labels=`+"`cat /info/labels | tr '\\n' ' '`"+` name=`+"`cat /info/name`"+`"; sleep 0.1; done`,
		v1.VolumeMount{Name: "info", MountPath: "/info"}))
	pod.Labels = map[string]string{"app": "demo", "stage": "one"}
	pod.Spec.Volumes = []v1.Volume{{Name: "info", VolumeSource: v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{Items: []v1.DownwardAPIVolumeFile{
		{Path: "labels", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.labels"}},
		{Path: "name", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}},
	}}}}}
	createPod(t, ns, pod)
	waitLog(t, ns, "dw", "c", `labels=app="demo" stage="one" name=dw`, time.Minute)
	patch := []byte(`{"metadata":{"labels":{"stage":"two"}}}`)
	updated := time.Now()
	if _, err := s.kube.CoreV1().Pods(ns).Patch(ctxFor(t, 10*time.Second), "dw", types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	seen := waitLog(t, ns, "dw", "c", `stage="two"`, 90*time.Second)
	t.Logf("downwardAPI label update propagation: %v", seen.Sub(updated).Round(10*time.Millisecond))
}

// buildAPICall compiles test/e2e/apicall into a directory a hostPath volume can give to a pod.
func buildAPICall(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "apicall")
	cmd := exec.Command("go", "build", "-o", out, "./apicall")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building apicall: %v\n%s", err, b)
	}
	return out
}

func TestVolumeProjectedTokenCallsAPIServer(t *testing.T) {
	ns := newNamespace(t)
	bin := buildAPICall(t)
	ctx := ctxFor(t, 30*time.Second)
	_, err := s.kube.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "read-pods"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.kube.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "default-reads-pods"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "read-pods"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "default", Namespace: ns}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	apiPort := s.env["APISERVER_URL"][strings.LastIndex(s.env["APISERVER_URL"], ":")+1:]
	server := s.env["NODE_IP"] + ":" + apiPort
	c := v1.Container{Name: "c", Image: image("busybox:latest"), Command: []string{"sh", "-c",
		`d=/var/run/secrets/kubernetes.io/serviceaccount; ls $d | tr '\n' ' '; echo; stat -L -c 'token %a' $d/token; grep " $d " /proc/mounts | cut -d' ' -f3; /apicall ` + server + ` tok`},
		VolumeMounts: []v1.VolumeMount{{Name: "bin", MountPath: "/apicall", ReadOnly: true}}}
	pod := neverRestart(basePod("tok", c))
	yes := true
	pod.Spec.AutomountServiceAccountToken = &yes // admission adds the kube-api-access volume
	file := v1.HostPathFile
	pod.Spec.Volumes = []v1.Volume{{Name: "bin", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: bin, Type: &file}}}}
	createPod(t, ns, pod)
	p := waitPod(t, ns, "tok", 2*time.Minute, "finished", func(p *v1.Pod) bool {
		return p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed
	})
	log := podLog(t, ns, "tok", "c")
	t.Logf("pod log:\n%s", log)
	if p.Status.Phase != v1.PodSucceeded {
		t.Fatalf("pod %s: %s", p.Status.Phase, describeStatus(p))
	}
	for _, want := range []string{
		"ca.crt namespace token", "token 644", "tmpfs",
		"selfsubjectreview 201 user=system:serviceaccount:" + ns + ":default pod=[tok]",
		"get pod 200 kind=Pod name=tok",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q", want)
		}
	}
}

func TestVolumeMissingSecretWaitsThenStarts(t *testing.T) {
	ns := newNamespace(t)
	pod := basePod("wait", busyboxWith("c", "cat /s/k; echo; sleep 3600", v1.VolumeMount{Name: "s", MountPath: "/s"}))
	pod.Spec.Volumes = []v1.Volume{{Name: "s", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "later"}}}}
	createPod(t, ns, pod)
	waitEvent(t, ns, "wait", "FailedMount", `MountVolume.SetUp failed for volume "s" : secret "later" not found`, time.Minute)
	waitPod(t, ns, "wait", 10*time.Second, "ContainerCreating", waitingWith("c", "ContainerCreating"))
	created := time.Now()
	createSecret(t, ns, "later", map[string]string{"k": "arrived"})
	waitPod(t, ns, "wait", time.Minute, "Running", isPhase(v1.PodRunning))
	t.Logf("pod running %v after its secret was created", time.Since(created).Round(10*time.Millisecond))
	waitLog(t, ns, "wait", "c", "arrived", 30*time.Second)
}

func TestVolumeSubPathExprAndEscapes(t *testing.T) {
	ns := newNamespace(t)
	c := busyboxWith("c", `echo written > /sub/x; cat /all/alpha/x; ls /all`,
		v1.VolumeMount{Name: "work", MountPath: "/all"},
		v1.VolumeMount{Name: "work", MountPath: "/sub", SubPathExpr: "$(SUB)"})
	c.Env = []v1.EnvVar{{Name: "SUB", Value: "alpha"}}
	pod := neverRestart(basePod("expr", c))
	pod.Spec.Volumes = []v1.Volume{{Name: "work", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}}
	createPod(t, ns, pod)
	waitPod(t, ns, "expr", time.Minute, "Succeeded", isPhase(v1.PodSucceeded))
	if log := podLog(t, ns, "expr", "c"); !strings.Contains(log, "written\nalpha") {
		t.Errorf("subPathExpr: log %q", log)
	}

	// Symlinks planted in the volume by an init container cannot lead a subPath out of it.
	for _, sub := range []string{"root", "up/etc", "abs"} {
		t.Run(sub, func(t *testing.T) {
			name := "escape-" + strings.ReplaceAll(sub, "/", "-")
			plant := busyboxWith("plant", `ln -s / /work/root; ln -s ../../../../../../.. /work/up; ln -s /etc /work/abs`, v1.VolumeMount{Name: "work", MountPath: "/work"})
			main := busyboxWith("c", "ls /escaped; sleep 3600", v1.VolumeMount{Name: "work", MountPath: "/escaped", SubPath: sub})
			p := basePod(name, main)
			p.Spec.InitContainers = []v1.Container{plant}
			p.Spec.Volumes = []v1.Volume{{Name: "work", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}}
			createPod(t, ns, p)
			got := waitPod(t, ns, name, time.Minute, "CreateContainerConfigError", waitingWith("c", "CreateContainerConfigError"))
			msg := got.Status.ContainerStatuses[0].State.Waiting.Message
			if want := `failed to prepare subPath for volumeMount "work" of container "c"`; msg != want {
				t.Errorf("message %q, want %q", msg, want)
			}
		})
	}
}

func TestVolumeHostPathTypes(t *testing.T) {
	ns := newNamespace(t)
	base := t.TempDir()
	made := filepath.Join(base, "made", "here")
	dirOrCreate, fileType := v1.HostPathDirectoryOrCreate, v1.HostPathFile
	pod := neverRestart(basePod("hp", busyboxWith("c", `echo from-pod > /host/f; grep -c ' /host ' /proc/mounts`, v1.VolumeMount{Name: "h", MountPath: "/host"})))
	pod.Spec.Volumes = []v1.Volume{{Name: "h", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: made, Type: &dirOrCreate}}}}
	createPod(t, ns, pod)
	waitPod(t, ns, "hp", time.Minute, "Succeeded", isPhase(v1.PodSucceeded))
	if b, err := os.ReadFile(filepath.Join(made, "f")); err != nil || string(b) != "from-pod\n" {
		t.Errorf("file written by the pod on the host: %q %v", b, err)
	}

	wrong := neverRestart(basePod("wrong", busyboxWith("c", "true", v1.VolumeMount{Name: "h", MountPath: "/host"})))
	wrong.Spec.Volumes = []v1.Volume{{Name: "h", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: base, Type: &fileType}}}}
	createPod(t, ns, wrong)
	waitEvent(t, ns, "wrong", "FailedMount", fmt.Sprintf(`MountVolume.SetUp failed for volume "h" : hostPath type check failed: %s is not a file, it's a Directory`, base), time.Minute)
	waitPod(t, ns, "wrong", 10*time.Second, "ContainerCreating", waitingWith("c", "ContainerCreating"))
}

func TestVolumePersistentVolumeClaimHostPath(t *testing.T) {
	ns := newNamespace(t)
	ctx := ctxFor(t, 3*time.Minute)
	path := t.TempDir()
	if err := os.WriteFile(filepath.Join(path, "data"), []byte("on the volume\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pvName := "vk-e2e-" + ns
	empty := ""
	claim := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "claim"}, Spec: v1.PersistentVolumeClaimSpec{
		AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}, StorageClassName: &empty, VolumeName: pvName,
		Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Mi")}}}}
	if _, err := s.kube.CoreV1().PersistentVolumeClaims(ns).Create(ctx, claim, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := neverRestart(basePod("pvc", busyboxWith("c", `cat /data/data; if (echo x > /data/new) 2>/dev/null; then echo writable; else echo read-only; fi`,
		v1.VolumeMount{Name: "d", MountPath: "/data"})))
	pod.Spec.NodeName = nodeName // an unbound claim would keep the scheduler from placing it
	pod.Spec.NodeSelector = nil
	pod.Spec.Volumes = []v1.Volume{{Name: "d", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "claim", ReadOnly: true}}}}
	createPod(t, ns, pod)
	// The kubelet's pod-level message for a claim it cannot resolve.
	waitEvent(t, ns, "pvc", "FailedMount", "Unable to attach or mount volumes: unmounted volumes=[d], unattached volumes=[], failed to process volumes=[d]: error processing PVC "+ns+"/claim: PVC is not bound", time.Minute)
	waitPod(t, ns, "pvc", 10*time.Second, "ContainerCreating", waitingWith("c", "ContainerCreating"))

	dir := v1.HostPathDirectory
	pv := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: pvName}, Spec: v1.PersistentVolumeSpec{
		AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}, StorageClassName: "",
		Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Mi")},
		PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
		ClaimRef:                      &v1.ObjectReference{Namespace: ns, Name: "claim"},
		PersistentVolumeSource:        v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: path, Type: &dir}}}}
	if _, err := s.kube.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = s.kube.CoreV1().PersistentVolumes().Delete(context.Background(), pvName, metav1.DeleteOptions{})
	})
	pvCreated := time.Now()
	waitPod(t, ns, "pvc", 2*time.Minute, "Succeeded", isPhase(v1.PodSucceeded))
	t.Logf("pod done %v after its volume was created (binding, then the next retry of the claim: 10-15 s apart, as the kubelet's pod worker)", time.Since(pvCreated).Round(100*time.Millisecond))
	if log := podLog(t, ns, "pvc", "c"); log != "on the volume\nread-only\n" {
		t.Errorf("log %q, want the volume's file and a read-only mount", log)
	}
	if _, err := os.Stat(filepath.Join(path, "new")); !os.IsNotExist(err) {
		t.Errorf("the pod wrote through a read-only claim: %v", err)
	}
}

// volumeRichPod has one volume of each kind that leaves something on the node: a tmpfs secret,
// a memory emptyDir, a configMap on disk, a projected token and a subPath bind mount.
func volumeRichPod(t *testing.T, ns, name string) *v1.Pod {
	t.Helper()
	pod := basePod(name, busyboxWith("c", "sleep 3600",
		v1.VolumeMount{Name: "s", MountPath: "/s"},
		v1.VolumeMount{Name: "mem", MountPath: "/mem"},
		v1.VolumeMount{Name: "cfg", MountPath: "/cfg"},
		v1.VolumeMount{Name: "disk", MountPath: "/one", SubPath: "one"}))
	yes := true
	pod.Spec.AutomountServiceAccountToken = &yes
	pod.Spec.Volumes = []v1.Volume{
		{Name: "s", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "s"}}},
		{Name: "mem", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory}}},
		{Name: "cfg", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}}}},
		{Name: "disk", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
	}
	return pod
}

func TestVolumeCleanupAfterPodDeletion(t *testing.T) {
	ns := newNamespace(t)
	createSecret(t, ns, "s", map[string]string{"k": "v"})
	createConfigMap(t, ns, "cfg", map[string]string{"k": "v"})
	created := createPod(t, ns, volumeRichPod(t, ns, "rich"))
	waitPod(t, ns, "rich", time.Minute, "Running", isPhase(v1.PodRunning))
	dir := hostPodDir(t, created.UID)
	mounts := hostMounts(t, dir+"/")
	t.Logf("mounts of the running pod: %v", mounts)
	if len(mounts) < 4 { // secret, memory emptyDir, kube-api-access, subPath
		t.Fatalf("expected at least 4 mounts under %s, got %v", dir, mounts)
	}
	deletePodAndWait(t, ns, "rich")
	if m := hostMounts(t, dir+"/"); len(m) != 0 {
		t.Errorf("mounts left after deletion: %v", m)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("pod directory left after deletion: %v", err)
	}
}

func TestVolumeCleanupAfterRestart(t *testing.T) {
	ns := newNamespace(t)
	createSecret(t, ns, "s", map[string]string{"k": "v"})
	createConfigMap(t, ns, "cfg", map[string]string{"k": "v"})
	keep := createPod(t, ns, volumeRichPod(t, ns, "keep"))
	gone := createPod(t, ns, volumeRichPod(t, ns, "gone"))
	keepRunning := waitPod(t, ns, "keep", time.Minute, "Running", isPhase(v1.PodRunning))
	waitPod(t, ns, "gone", time.Minute, "Running", isPhase(v1.PodRunning))
	keepDir, goneDir := hostPodDir(t, keep.UID), hostPodDir(t, gone.UID)
	keepData := filepath.Join(keepDir, "volumes", "kubernetes.io~configmap", "cfg", "..data")
	keepTS, err := os.Readlink(keepData)
	if err != nil {
		t.Fatal(err)
	}
	keepMounts := hostMounts(t, keepDir+"/")

	stopNode(t, "kill")
	// While vk-cri is down, the runtime loses one pod and the API forgets it.
	ctx := ctxFor(t, time.Minute)
	sbs, _ := runtimeObjects(t, string(gone.UID))
	for _, sb := range sbs {
		_ = s.runtime.Runtime.StopPodSandbox(ctx, sb.Id)
		if err := s.runtime.Runtime.RemovePodSandbox(ctx, sb.Id); err != nil {
			t.Fatal(err)
		}
	}
	zero := int64(0)
	if err := s.kube.CoreV1().Pods(ns).Delete(ctx, "gone", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	startNode(t, "")
	err = wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		_, err := os.Stat(goneDir)
		return os.IsNotExist(err), nil
	})
	if err != nil {
		t.Errorf("orphaned pod directory %s still there after the restart", goneDir)
	}
	if m := hostMounts(t, goneDir+"/"); len(m) != 0 {
		t.Errorf("orphaned pod's mounts left: %v", m)
	}
	after := waitPod(t, ns, "keep", 30*time.Second, "Running", isPhase(v1.PodRunning))
	if got, want := containerIDs(after), containerIDs(keepRunning); !equalMaps(got, want) {
		t.Errorf("live pod's containers changed: %v -> %v", want, got)
	}
	if ts, err := os.Readlink(keepData); err != nil || ts != keepTS {
		t.Errorf("live pod's configMap data changed: %q -> %q (%v)", keepTS, ts, err)
	}
	if m := hostMounts(t, keepDir+"/"); len(m) != len(keepMounts) {
		t.Errorf("live pod's mounts changed: %v -> %v", keepMounts, m)
	}
}

func TestVolumeEmptyDirSizeLimitEvicts(t *testing.T) {
	ns := newNamespace(t)
	limit := resource.MustParse("1Mi")
	pod := basePod("big", busyboxWith("c", "dd if=/dev/zero of=/scratch/fill bs=1024 count=4096 2>/dev/null; echo filled; sleep 3600",
		v1.VolumeMount{Name: "scratch", MountPath: "/scratch"}))
	pod.Spec.Volumes = []v1.Volume{{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{SizeLimit: &limit}}}}
	createPod(t, ns, pod)
	waitLog(t, ns, "big", "c", "filled", time.Minute)
	filled := time.Now()
	// Volumes are measured once a minute, the eviction manager looks every 10 s (as the kubelet).
	p := waitPod(t, ns, "big", 2*time.Minute, "Failed", isPhase(v1.PodFailed))
	t.Logf("evicted %v after the emptyDir went over its limit", time.Since(filled).Round(time.Second))
	if want := `Usage of EmptyDir volume "scratch" exceeds the limit "1Mi". `; p.Status.Reason != "Evicted" || p.Status.Message != want {
		t.Errorf("status reason %q message %q, want Evicted %q", p.Status.Reason, p.Status.Message, want)
	}
	for _, c := range p.Status.Conditions {
		if c.Type == v1.DisruptionTarget {
			t.Errorf("an emptyDir eviction carries no DisruptionTarget condition (kubelet), got %+v", c)
		}
	}
	waitEvent(t, ns, "big", "Evicted", `Usage of EmptyDir volume "scratch" exceeds the limit "1Mi".`, 30*time.Second)
}
