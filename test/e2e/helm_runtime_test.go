//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-cri/vk-cri/cri"
)

// The chart as operators install it: its vk-cri pods run on the reference node "ref", i.e. under
// the upstream kubelet, with the release's own containerd (runtime.mode bundled, the default),
// and run ordinary pods: the default service-account token, secret, configMap with subPath,
// memory emptyDir, projected downwardAPI volumes and HTTP probes. Node names, ports, cgroups,
// bridges and subnets are this test's own (vk-chart*, 10350-10355).
const (
	bundledDSNode      = "vk-chart-ds"
	bundledDSPort      = 10350
	bundledExtraPrefix = "vk-chart-x"
	bundledExtraPort   = 10352
	bundledExtraHealth = 10354
	bundledRunDir      = "/run/vk-chart"
)

// TestHelmBundledDaemonSetOnRef: DaemonSet mode on the node run by the upstream kubelet.
func TestHelmBundledDaemonSetOnRef(t *testing.T) {
	ns := newNamespace(t)
	release := "chds"
	values := func(digest string) map[string]any {
		v := bundledValues(digest, release, "10.251.0.0/16")
		v["mode"] = "daemonset"
		v["daemonset"] = map[string]any{
			"nodeName":    bundledDSNode,
			"kubeletPort": bundledDSPort,
			"healthzPort": bundledDSPort + 1,
			"rootDir":     "/var/lib/vk-chart-ds/root",
			"podLogDir":   "/var/lib/vk-chart-ds/pod-logs",
			"cgroupRoot":  "/vk-chart-ds",
		}
		v["runtime"].(map[string]any)["bundled"].(map[string]any)["dir"] = "/var/lib/vk-chart-ds/runtime"
		return v
	}
	nodes := []bundledNode{{
		name:       bundledDSNode,
		port:       bundledDSPort,
		socket:     bundledSocket(release + "/daemonset"),
		rootDir:    "/var/lib/vk-chart-ds/root",
		cgroupRoot: "/vk-chart-ds",
		bridge:     bundledBridge(release, "d"),
	}}
	runBundledCycle(t, ns, release, nodes, values, []string{"/var/lib/vk-chart-ds"})
}

// TestHelmBundledExtraNodesOnRef: extraNodes mode, two nodes with their own runtimes and
// capacities, both run by vk-cri pods on ref.
func TestHelmBundledExtraNodesOnRef(t *testing.T) {
	ns := newNamespace(t)
	release := "chx"
	hostDir := "/var/lib/vk-chart-x"
	values := func(digest string) map[string]any {
		v := bundledValues(digest, release, "10.252.0.0/16")
		v["mode"] = "extraNodes"
		v["extraNodes"] = map[string]any{
			"count":           2,
			"nameTemplate":    bundledExtraPrefix + "{{ .Index }}",
			"kubeletPortBase": bundledExtraPort,
			"healthzPortBase": bundledExtraHealth,
			"hostDir":         hostDir,
			"cgroupParent":    "/vk-chart-x",
			"nodes":           []any{map[string]any{"maxPods": 17}, map[string]any{"maxPods": 23}},
		}
		return v
	}
	var nodes []bundledNode
	for i := 0; i < 2; i++ {
		name := fmt.Sprintf("%s%d", bundledExtraPrefix, i)
		nodes = append(nodes, bundledNode{
			name:       name,
			port:       int32(bundledExtraPort + i),
			socket:     bundledSocket(release + "/" + name),
			rootDir:    hostDir + "/" + name + "/root",
			cgroupRoot: "/vk-chart-x/" + name,
			bridge:     bundledBridge(release, fmt.Sprint(i)),
			maxPods:    []int64{17, 23}[i],
		})
	}
	runBundledCycle(t, ns, release, nodes, values, []string{hostDir})
}

// bundledNode is what the test knows of one node of the release: where its runtime and files are.
type bundledNode struct {
	name       string
	port       int32
	socket     string
	rootDir    string
	cgroupRoot string
	bridge     string
	maxPods    int64
}

// bundledSocket is the release runtime's socket, as the chart names it: runDir/<8 hex of key>.
func bundledSocket(key string) string {
	sum := sha256.Sum256([]byte(key))
	return bundledRunDir + "/" + hex.EncodeToString(sum[:])[:8] + "/containerd.sock"
}

func bundledBridge(release, suffix string) string {
	sum := sha256.Sum256([]byte(release))
	return "vk" + hex.EncodeToString(sum[:])[:6] + suffix
}

// bundledValues: agents on ref, the release's own runtime, the stack's API server and registry.
func bundledValues(digest, release, podCIDR string) map[string]any {
	apiHost, apiPort := apiServerHostPort()
	return map[string]any{
		"image":     map[string]any{"repository": image("vk-cri-runtime"), "digest": digest},
		"apiServer": map[string]any{"host": apiHost, "port": apiPort},
		"runtime": map[string]any{
			"mode": "bundled",
			"bundled": map[string]any{
				"runDir":             bundledRunDir,
				"sandboxImage":       image("pause:3.10"),
				"insecureRegistries": []any{s.env["REGISTRY"]},
				// This VM's root lacks CAP_SYS_RESOURCE (docs/environment notes).
				"restrictOOMScoreAdj": true,
			},
		},
		"network": map[string]any{"podCIDR": podCIDR},
		"node": map[string]any{
			"ip":     "$(HOST_IP)",
			"labels": map[string]any{helmLabelKey: "one"},
			"taints": []any{map[string]any{"key": helmTaintKey, "effect": "NoSchedule"}},
		},
		"tls":          map[string]any{"mode": "csr"},
		"nodeSelector": map[string]any{v1.LabelHostname: refNode},
		"logLevel":     "debug",
	}
}

// runBundledCycle installs the release, runs the workload on each node and checks it, upgrades
// the image (the workload's containers stay), and uninstalls (nothing of the release is left).
// Meanwhile both runtimes are watched: the ref kubelet's and the release's.
func runBundledCycle(t *testing.T, ns, release string, nodes []bundledNode, values func(string) map[string]any, hostDirs []string) {
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = n.name
	}
	t.Cleanup(func() { cleanUpBundledRelease(t, ns, release, nodes, hostDirs) })

	refBefore := refSandboxes(t)
	first := pushRuntimeImage(t, "one")
	approveServingCSRs(t, "system:serviceaccount:"+ns+":"+release+"-vk-cri", names)
	helmMust(t, "install", release, chartDir(), "--namespace", ns, "-f", writeValues(t, values(first)), "--wait", "--timeout", "4m")
	agents := waitAgentsOn(t, ns, release, refNode, len(nodes))
	for _, n := range nodes {
		node := waitNode(t, n.name, 2*time.Minute, "Ready", nodeReady)
		checkReleaseNode(t, node, n.port, release)
		if n.maxPods > 0 {
			if got := node.Status.Capacity.Pods().Value(); got != n.maxPods {
				t.Errorf("node %s: pods capacity %d, want its own %d", n.name, got, n.maxPods)
			}
		}
	}

	createWorkloadObjects(t, ns)
	for _, n := range nodes {
		createWorkload(t, ns, n.name)
	}
	pods := map[string]*v1.Pod{}
	for _, n := range nodes {
		pods[n.name] = waitWorkloadReady(t, ns, n.name)
	}
	watch := watchRuntimes(t, nodes, pods)
	for _, n := range nodes {
		checkWorkload(t, ns, pods[n.name], n)
	}

	// helm upgrade to another image: each vk-cri pod (and its containerd) is replaced; the
	// workload's containers are not.
	second := pushRuntimeImage(t, "two")
	if second == first {
		t.Fatalf("the second image has the first one's digest %s", first)
	}
	helmMust(t, "upgrade", release, chartDir(), "--namespace", ns, "-f", writeValues(t, values(second)), "--wait", "--timeout", "4m")
	waitAgentsReplaced(t, ns, release, agents, second)
	for _, n := range nodes {
		waitNode(t, n.name, 2*time.Minute, "Ready", nodeReady)
		after := waitWorkloadReady(t, ns, n.name)
		before := pods[n.name]
		if after.UID != before.UID {
			t.Errorf("node %s: workload pod %s replaced by %s during the upgrade", n.name, before.Name, after.Name)
			continue
		}
		for name, id := range containerIDs(before) {
			if got := containerIDs(after)[name]; got != id {
				t.Errorf("node %s: container %s is %s after the upgrade, was %s", n.name, name, got, id)
			}
		}
		for _, cs := range after.Status.ContainerStatuses {
			if cs.RestartCount != 0 {
				t.Errorf("node %s: container %s restarted %d times", n.name, cs.Name, cs.RestartCount)
			}
		}
		// The new vk-cri and containerd serve the running pod: logs, exec, port-forward.
		checkStreams(t, ns, after)
	}
	watch.stop(t)
	checkRefKeptItsPods(t, refBefore)

	// helm uninstall: the pre-delete drain deletes the workload's pods (the Deployments make
	// new ones, which stay Pending: no node is left for them), then the agents go.
	helmMust(t, "uninstall", release, "--namespace", ns, "--wait", "--timeout", "4m")
	for _, n := range nodes {
		waitNodeGone(t, n.name, 2*time.Minute)
	}
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		return len(listAgents(t, ns, release)) == 0, nil
	})
	if err != nil {
		t.Fatalf("%d vk-cri pods left 90s after uninstall", len(listAgents(t, ns, release)))
	}
	checkReleaseObjectsGone(t, ns, release)
	for _, n := range nodes {
		checkNothingLeft(t, n)
	}
	checkRefKeptItsPods(t, refBefore)
}

// pushRuntimeImage builds the runtime bundle from bin/vk-cri and pushes it; the label makes two
// different images of one binary. It returns the digest.
func pushRuntimeImage(t *testing.T, label string) string {
	t.Helper()
	c := exec.Command(filepath.Join(s.repo, "hack/image.sh"), "runtime")
	c.Env = append(os.Environ(), "VKCRI_IMAGE_TAG=e2e-"+label, "VKCRI_IMAGE_VERSION=e2e-"+label)
	var stderr bytes.Buffer
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		t.Fatalf("hack/image.sh runtime: %v\n%s", err, stderr.String())
	}
	digest := strings.TrimSpace(string(out))
	if !strings.HasPrefix(digest, "sha256:") {
		t.Fatalf("hack/image.sh printed %q, want a digest", digest)
	}
	return digest
}

// waitAgentsOn waits until the release's want vk-cri pods run and are ready on host.
func waitAgentsOn(t *testing.T, ns, release, host string, want int) []v1.Pod {
	t.Helper()
	var agents []v1.Pod
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		agents = runningAgents(t, ns, release)
		if len(agents) != want {
			return false, nil
		}
		for _, p := range agents {
			if p.Spec.NodeName != host || !isRunningReady(&p) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		for _, p := range agents {
			t.Logf("vk-cri pod %s: node %s, %s", p.Name, p.Spec.NodeName, describeStatus(&p))
		}
		t.Fatalf("%d vk-cri pods, want %d running and ready on %s", len(agents), want, host)
	}
	return agents
}

// runningAgents: the release's vk-cri pods, without the uninstall drain's.
func runningAgents(t *testing.T, ns, release string) []v1.Pod {
	var out []v1.Pod
	for _, p := range listAgents(t, ns, release) {
		if p.Labels["app.kubernetes.io/component"] != "uninstall-drain" {
			out = append(out, p)
		}
	}
	return out
}

// waitAgentsReplaced: every agent of before is gone and as many new ones run the new image.
func waitAgentsReplaced(t *testing.T, ns, release string, before []v1.Pod, digest string) {
	t.Helper()
	old := map[string]bool{}
	for _, p := range before {
		old[string(p.UID)] = true
	}
	var agents []v1.Pod
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		agents = runningAgents(t, ns, release)
		if len(agents) != len(before) {
			return false, nil
		}
		for _, p := range agents {
			if old[string(p.UID)] || !isRunningReady(&p) || !strings.HasSuffix(p.Spec.Containers[0].Image, digest) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		for _, p := range agents {
			t.Logf("vk-cri pod %s: %s image %s", p.Name, describeStatus(&p), p.Spec.Containers[0].Image)
		}
		t.Fatalf("the vk-cri pods were not replaced by ones running %s", digest)
	}
}

// createWorkloadObjects: the Secret and ConfigMap the workload's volumes show.
func createWorkloadObjects(t *testing.T, ns string) {
	t.Helper()
	ctx := ctxFor(t, 30*time.Second)
	if _, err := s.kube.CoreV1().Secrets(ns).Create(ctx, &v1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "creds"},
		Data:       map[string][]byte{"password": []byte("s3cret-value")},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.kube.CoreV1().ConfigMaps(ns).Create(ctx, &v1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "settings"},
		Data:       map[string]string{"app.conf": "mode=chart-e2e\n", "other": "unused"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// workloadScript serves /healthz over HTTP on 8080 once every volume shows what it should,
// and prints what it saw.
const workloadScript = `set -e
cat /etc/creds/password >/dev/null
grep -q mode=chart-e2e /etc/app/app.conf
test -s /var/run/secrets/kubernetes.io/serviceaccount/token
grep -q 'app="web"' /etc/podinfo/labels
echo memory > /scratch/probe
mkdir -p /tmp/www && echo ok > /tmp/www/healthz
echo "volumes ok on $NODE_NAME: secret, configMap subPath, token, downwardAPI, memory emptyDir"
exec httpd -f -p 8080 -h /tmp/www`

// createWorkload makes a Deployment of one pod on node: default token (automount not
// disabled), Secret, ConfigMap with subPath, memory emptyDir, projected downwardAPI, HTTP
// readiness and liveness probes.
func createWorkload(t *testing.T, ns, node string) {
	t.Helper()
	one := int32(1)
	grace := int64(5)
	labels := map[string]string{"app": "web", "node": node}
	probe := func(delay int32) *v1.Probe {
		return &v1.Probe{
			ProbeHandler:        v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}},
			InitialDelaySeconds: delay, PeriodSeconds: 2, TimeoutSeconds: 2, FailureThreshold: 3,
		}
	}
	memLimit := resource.MustParse("16Mi")
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web-" + node},
		Spec: appsv1.DeploymentSpec{
			Replicas: &one,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: v1.PodSpec{
					NodeSelector:                  map[string]string{v1.LabelHostname: node},
					Tolerations:                   []v1.Toleration{{Key: helmTaintKey, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}},
					TerminationGracePeriodSeconds: &grace,
					Containers: []v1.Container{{
						Name:    "web",
						Image:   image("busybox:latest"),
						Command: []string{"sh", "-c", workloadScript},
						Env:     []v1.EnvVar{{Name: "NODE_NAME", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}},
						Ports:   []v1.ContainerPort{{ContainerPort: 8080}},
						VolumeMounts: []v1.VolumeMount{
							{Name: "creds", MountPath: "/etc/creds", ReadOnly: true},
							{Name: "settings", MountPath: "/etc/app/app.conf", SubPath: "app.conf"},
							{Name: "scratch", MountPath: "/scratch"},
							{Name: "podinfo", MountPath: "/etc/podinfo"},
						},
						ReadinessProbe: probe(0),
						LivenessProbe:  probe(2),
					}},
					Volumes: []v1.Volume{
						{Name: "creds", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "creds"}}},
						{Name: "settings", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "settings"}}}},
						{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory, SizeLimit: &memLimit}}},
						{Name: "podinfo", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{{
							DownwardAPI: &v1.DownwardAPIProjection{Items: []v1.DownwardAPIVolumeFile{
								{Path: "labels", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.labels"}},
								{Path: "name", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}},
							}},
						}}}}},
					},
				},
			},
		},
	}
	if _, err := s.kube.AppsV1().Deployments(ns).Create(ctxFor(t, 30*time.Second), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// waitWorkloadReady returns the one workload pod of node once it runs and is ready.
func waitWorkloadReady(t *testing.T, ns, node string) *v1.Pod {
	t.Helper()
	var last []v1.Pod
	var ready *v1.Pod
	err := wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		l, err := s.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web,node=" + node})
		if err != nil {
			return false, nil
		}
		last = l.Items
		if len(l.Items) == 1 && isRunningReady(&l.Items[0]) && l.Items[0].DeletionTimestamp == nil {
			ready = &l.Items[0]
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		for i := range last {
			t.Logf("workload pod %s: %s", last[i].Name, describeStatus(&last[i]))
		}
		t.Fatalf("the workload on %s is not running and ready", node)
	}
	return ready
}

// adminKubectl runs the stack's kubectl as the admin; stdout only (stderr in the error).
func adminKubectl(ctx context.Context, args ...string) (string, error) {
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, s.env["KUBECTL"], append([]string{"--kubeconfig", s.env["KUBECONFIG"]}, args...)...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		err = fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return string(out), err
}

// checkWorkload: volumes seen from inside, the token usable against the API server, and the
// streams (logs, exec, port-forward) through the API server and the node's kubelet API.
func checkWorkload(t *testing.T, ns string, p *v1.Pod, n bundledNode) {
	t.Helper()
	if p.Status.PodIP == "" || p.Spec.NodeName != n.name {
		t.Errorf("pod %s: IP %q on %s", p.Name, p.Status.PodIP, p.Spec.NodeName)
	}
	ctx := ctxFor(t, 2*time.Minute)
	for _, c := range []struct{ cmd, want string }{
		{"cat /etc/creds/password", "s3cret-value"},
		{"cat /etc/app/app.conf", "mode=chart-e2e"},
		{"cat /etc/podinfo/name", p.Name},
		{"cat /scratch/probe", "memory"},
		// The tmpfs volumes are tmpfs in the container too.
		{"grep -E ' /(scratch|etc/creds|(var/)?run/secrets/kubernetes.io/serviceaccount) ' /proc/mounts | grep -c ' tmpfs '", "3"},
	} {
		out, err := adminKubectl(ctx, "exec", "-n", ns, p.Name, "--", "sh", "-c", c.cmd)
		if err != nil || !strings.Contains(out, c.want) {
			t.Errorf("kubectl exec %s: %q %v, want %q", c.cmd, out, err, c.want)
		}
	}
	checkTokenFromPod(t, ctx, ns, p)
	checkStreams(t, ns, p)
}

// checkTokenFromPod reads the pod's service-account token and uses it against the API server
// (no kube-proxy here: pods cannot reach the kubernetes Service): the API server knows it as
// the namespace's default ServiceAccount, bound to this pod.
func checkTokenFromPod(t *testing.T, ctx context.Context, ns string, p *v1.Pod) {
	t.Helper()
	token, err := adminKubectl(ctx, "exec", "-n", ns, p.Name, "--", "cat", "/var/run/secrets/kubernetes.io/serviceaccount/token")
	if err != nil {
		t.Fatalf("reading the pod's token: %v %s", err, token)
	}
	cmd := exec.CommandContext(ctx, s.env["KUBECTL"], "--kubeconfig=/dev/null", "--server="+s.env["APISERVER_URL"],
		"--certificate-authority="+s.env["CLIENT_CA"], "--token="+strings.TrimSpace(token),
		"auth", "whoami", "-o", "json")
	out, err := cmd.Output()
	var review authenticationv1.SelfSubjectReview
	if err == nil {
		err = json.Unmarshal(out, &review)
	}
	user := review.Status.UserInfo
	if want := "system:serviceaccount:" + ns + ":default"; err != nil || user.Username != want {
		t.Errorf("kubectl auth whoami with the pod's token: %q %v, want %s", out, err, want)
	}
	if got := user.Extra["authentication.kubernetes.io/pod-name"]; len(got) != 1 || got[0] != p.Name {
		t.Errorf("the pod's token is bound to pod %v, want %s", got, p.Name)
	}
}

// checkStreams: kubectl logs, exec and port-forward through the API server.
func checkStreams(t *testing.T, ns string, p *v1.Pod) {
	t.Helper()
	ctx := ctxFor(t, time.Minute)
	if out, err := adminKubectl(ctx, "logs", "-n", ns, p.Name); err != nil || !strings.Contains(out, "volumes ok on "+p.Spec.NodeName) {
		t.Errorf("kubectl logs %s: %q %v", p.Name, out, err)
	}
	if out, err := adminKubectl(ctx, "exec", "-n", ns, p.Name, "--", "echo", "exec-ok"); err != nil || strings.TrimSpace(out) != "exec-ok" {
		t.Errorf("kubectl exec %s: %q %v", p.Name, out, err)
	}
	pf := exec.CommandContext(ctx, s.env["KUBECTL"], "--kubeconfig", s.env["KUBECONFIG"], "port-forward", "-n", ns, "pod/"+p.Name, ":8080")
	stdout, err := pf.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	pf.Stderr = &stderr
	if err := pf.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = pf.Process.Kill(); _ = pf.Wait() }()
	port := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`127\.0\.0\.1:(\d+) ->`)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				port <- m[1]
				break
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case lp := <-port:
		resp, err := http.Get("http://127.0.0.1:" + lp + "/healthz")
		if err != nil {
			t.Errorf("GET through port-forward: %v (%s)", err, stderr.String())
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || strings.TrimSpace(string(body)) != "ok" {
			t.Errorf("GET through port-forward: %d %q", resp.StatusCode, body)
		}
	case <-ctx.Done():
		t.Errorf("kubectl port-forward did not start: %s", stderr.String())
	}
}

// runtimeWatch samples both runtimes while the workload runs: the release's runtime of each
// node must always show its workload sandbox ready (whenever it answers: it restarts during
// the upgrade), and the workload's sandbox must never be in the ref kubelet's runtime.
type runtimeWatch struct {
	cancel  context.CancelFunc
	done    chan struct{}
	mu      sync.Mutex
	samples int
	errs    []string
}

func watchRuntimes(t *testing.T, nodes []bundledNode, pods map[string]*v1.Pod) *runtimeWatch {
	t.Helper()
	type target struct {
		node string
		uid  string
		rt   *cri.Client
	}
	var targets []target
	for _, n := range nodes {
		ctx := ctxFor(t, 30*time.Second)
		rt, err := cri.Connect(ctx, "unix://"+n.socket, 10*time.Second)
		if err != nil {
			t.Fatalf("the release's runtime of %s at %s: %v", n.name, n.socket, err)
		}
		targets = append(targets, target{n.name, string(pods[n.name].UID), rt})
	}
	ref, err := cri.Connect(ctxFor(t, 30*time.Second), s.env["REF_CRI_ENDPOINT"], 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &runtimeWatch{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		_ = wait.PollUntilContextCancel(ctx, 2*time.Second, true, func(ctx context.Context) (bool, error) {
			for _, tg := range targets {
				lctx, c := context.WithTimeout(ctx, 5*time.Second)
				sbs, err := tg.rt.Runtime.ListPodSandbox(lctx, &runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{"io.kubernetes.pod.uid": tg.uid}})
				c()
				if err != nil {
					continue // the release's containerd restarts during the upgrade
				}
				w.mu.Lock()
				w.samples++
				if len(sbs) != 1 || sbs[0].State != runtimeapi.PodSandboxState_SANDBOX_READY {
					w.errs = append(w.errs, fmt.Sprintf("%s: node %s's runtime shows %d sandboxes of the workload pod (want one, ready)", time.Now().Format(time.TimeOnly), tg.node, len(sbs)))
				}
				w.mu.Unlock()
				lctx, c = context.WithTimeout(ctx, 5*time.Second)
				refs, err := ref.Runtime.ListPodSandbox(lctx, &runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{"io.kubernetes.pod.uid": tg.uid}})
				c()
				if err == nil && len(refs) != 0 {
					w.mu.Lock()
					w.errs = append(w.errs, fmt.Sprintf("the ref kubelet's runtime has a sandbox of %s's workload", tg.node))
					w.mu.Unlock()
				}
			}
			return false, nil
		})
	}()
	return w
}

func (w *runtimeWatch) stop(t *testing.T) {
	t.Helper()
	w.cancel()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	t.Logf("runtime watch: %d samples of the release's runtimes", w.samples)
	if w.samples == 0 {
		t.Error("the release's runtimes never answered")
	}
	for _, e := range w.errs {
		t.Error(e)
	}
}

// refSandbox is a ready sandbox of the ref kubelet and the pod it belongs to.
type refSandbox struct{ id, ns, name, uid string }

func refSandboxes(t *testing.T) []refSandbox {
	t.Helper()
	ref, err := cri.Connect(ctxFor(t, 30*time.Second), s.env["REF_CRI_ENDPOINT"], 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	sbs, err := ref.Runtime.ListPodSandbox(ctxFor(t, 30*time.Second), &runtimeapi.PodSandboxFilter{State: &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_READY}})
	if err != nil {
		t.Fatal(err)
	}
	var out []refSandbox
	for _, sb := range sbs {
		out = append(out, refSandbox{sb.Id, sb.Metadata.Namespace, sb.Metadata.Name, sb.Metadata.Uid})
	}
	return out
}

// checkRefKeptItsPods: every sandbox the ref kubelet had ready at the start whose pod is still
// in the API (same UID, not being deleted: other tests share ref and delete theirs) is still
// ready: the kubelet killed none of its own pods because of the release.
func checkRefKeptItsPods(t *testing.T, before []refSandbox) {
	t.Helper()
	now := map[string]bool{}
	for _, sb := range refSandboxes(t) {
		now[sb.id] = true
	}
	kept := 0
	for _, sb := range before {
		p, err := s.kube.CoreV1().Pods(sb.ns).Get(ctxFor(t, 10*time.Second), sb.name, metav1.GetOptions{})
		if err != nil || string(p.UID) != sb.uid || p.DeletionTimestamp != nil || p.Spec.NodeName != refNode {
			continue
		}
		if !now[sb.id] {
			t.Errorf("the ref kubelet's sandbox %s of pod %s/%s (still in the API) is gone", sb.id, sb.ns, sb.name)
			continue
		}
		kept++
	}
	t.Logf("ref kept %d of its %d sandboxes whose pods are still in the API", kept, len(before))
}

// checkNothingLeft: after uninstall, nothing of the node's runtime runs (no shim of its socket,
// no cgroup under its root, no bridge), and nothing is mounted under its root dir.
func checkNothingLeft(t *testing.T, n bundledNode) {
	t.Helper()
	var left []string
	err := wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		left = left[:0]
		procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, p := range procs {
			b, err := os.ReadFile(p)
			if err == nil && bytes.Contains(b, []byte(filepath.Dir(n.socket))) {
				left = append(left, "process "+strings.ReplaceAll(string(b), "\x00", " "))
			}
		}
		for _, mp := range cgroupMountPoints(t) {
			for _, cg := range []string{n.cgroupRoot, n.cgroupRoot + "-shims"} {
				if _, err := os.Stat(mp + cg); err == nil {
					left = append(left, "cgroup "+mp+cg)
				}
			}
		}
		if _, err := os.Stat("/sys/class/net/" + n.bridge); err == nil {
			left = append(left, "bridge "+n.bridge)
		}
		mounts, _ := os.ReadFile("/proc/self/mountinfo")
		for _, line := range strings.Split(string(mounts), "\n") {
			if f := strings.Fields(line); len(f) > 4 && (strings.HasPrefix(f[4], n.rootDir) || strings.HasPrefix(f[4], filepath.Dir(n.socket))) {
				left = append(left, "mount "+f[4])
			}
		}
		return len(left) == 0, nil
	})
	if err != nil {
		t.Errorf("node %s: left after uninstall: %v", n.name, left)
	}
}

func cgroupMountPoints(t *testing.T) []string {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if ok && len(f) > 4 && len(g) > 0 && (g[0] == "cgroup" || g[0] == "cgroup2") {
			out = append(out, f[4])
		}
	}
	return out
}

// cleanUpBundledRelease removes what a failed run left: the release, its nodes, and through
// each node's runtime socket (if it still answers) its sandboxes; then its host directories.
func cleanUpBundledRelease(t *testing.T, ns, release string, nodes []bundledNode, hostDirs []string) {
	for _, n := range nodes {
		removeAllSandboxes(t, n.socket)
	}
	if out, err := helmRun(t, "uninstall", release, "--namespace", ns, "--wait", "--timeout", "2m"); err != nil &&
		!strings.Contains(out, "not found") {
		t.Logf("cleanup: helm uninstall: %v\n%s", err, out)
		// The drain hook failed: uninstall without it, the sandboxes are removed below.
		if out, err := helmRun(t, "uninstall", release, "--namespace", ns, "--no-hooks", "--wait", "--timeout", "2m"); err != nil {
			t.Logf("cleanup: helm uninstall --no-hooks: %v\n%s", err, out)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, n := range nodes {
		_ = s.kube.CoreV1().Nodes().Delete(ctx, n.name, metav1.DeleteOptions{})
	}
	// The shims of a runtime whose pods were not removed outlive it (that is what keeps pods
	// running across an upgrade): kill what is left of this test's runtimes.
	for _, n := range nodes {
		killProcessesMentioning(t, filepath.Dir(n.socket))
		// The shared netns directory's bind mount on the host (the init container's).
		_ = exec.Command("umount", "-l", filepath.Dir(n.socket)+"-netns").Run()
		// A bridge left with the subnet's gateway address would take the next run's route.
		_ = exec.Command("ip", "link", "del", n.bridge).Run()
		for _, mp := range cgroupMountPoints(t) {
			for _, cg := range []string{n.cgroupRoot, n.cgroupRoot + "-shims"} {
				_ = exec.Command("find", mp+cg, "-depth", "-type", "d", "-exec", "rmdir", "{}", ";").Run()
			}
		}
	}
	for _, d := range hostDirs {
		if !strings.HasPrefix(d, "/var/lib/vk-chart") {
			continue
		}
		_ = os.RemoveAll(d)
	}
	_ = os.RemoveAll(bundledRunDir)
}

// removeAllSandboxes stops and removes every sandbox of the runtime at socket, if it answers.
func removeAllSandboxes(t *testing.T, socket string) {
	if _, err := os.Stat(socket); err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rt, err := cri.Connect(ctx, "unix://"+socket, 20*time.Second)
	if err != nil {
		return
	}
	sbs, err := rt.Runtime.ListPodSandbox(ctx, nil)
	if err != nil {
		return
	}
	for _, sb := range sbs {
		_ = rt.Runtime.StopPodSandbox(ctx, sb.Id)
		_ = rt.Runtime.RemovePodSandbox(ctx, sb.Id)
	}
	if len(sbs) > 0 {
		t.Logf("cleanup: removed %d sandboxes from %s", len(sbs), socket)
	}
}

// killProcessesMentioning SIGKILLs the processes whose command line holds dir (this test's
// runtime directories: nobody else's).
func killProcessesMentioning(t *testing.T, dir string) {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(b, []byte(dir)) {
			continue
		}
		var pid int
		if _, err := fmt.Sscanf(p, "/proc/%d/cmdline", &pid); err == nil && pid != os.Getpid() {
			if proc, err := os.FindProcess(pid); err == nil {
				_ = proc.Kill()
				t.Logf("cleanup: killed %d (%s)", pid, strings.ReplaceAll(string(b), "\x00", " "))
			}
		}
	}
}
