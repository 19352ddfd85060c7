//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"sigs.k8s.io/yaml"

	"github.com/vk-cri/vk-cri/cri"
)

// The chart's e2e: charts/vk-cri installed with the helm CLI (hack/build-helm.sh) into the local
// stack. Its vk-cri pods run on the e2e node (nodeName), in the host network, against the
// stack's containerd, and register extra nodes with these names and ports.
const (
	helmExtraNodePrefix = "helm-x"
	helmKubeletPortBase = 10280
	helmHealthzPortBase = 10284
	helmTaintKey        = "vk-cri.io/helm-e2e"
	helmLabelKey        = "vk-cri.io/helm-e2e-label"
)

// helmCLI returns the path of the helm binary, building it on first use (cached afterwards).
func helmCLI(t *testing.T) string {
	t.Helper()
	c := exec.Command(filepath.Join(s.repo, "hack/build-helm.sh"))
	var stderr bytes.Buffer
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		t.Fatalf("hack/build-helm.sh: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

// helmRun runs helm with the admin kubeconfig; it returns the combined output and the error.
func helmRun(t *testing.T, args ...string) (string, error) {
	t.Helper()
	c := exec.Command(helmCLI(t), args...)
	c.Env = append(os.Environ(), "KUBECONFIG="+s.env["KUBECONFIG"], "HELM_CACHE_HOME="+t.TempDir(),
		"HELM_CONFIG_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
	out, err := c.CombinedOutput()
	return string(out), err
}

func helmMust(t *testing.T, args ...string) string {
	t.Helper()
	out, err := helmRun(t, args...)
	if err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func chartDir() string { return filepath.Join(s.repo, "charts/vk-cri") }

func writeValues(t *testing.T, values map[string]any) string {
	t.Helper()
	b, err := yaml.Marshal(values)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestHelmChartLintAndServerDryRun: `helm lint --strict` is clean and the manifests of both
// modes, with every optional part switched on, are accepted by the 1.37 API server
// (server-side dry-run: schemas, defaulting and validation, nothing stored).
func TestHelmChartLintAndServerDryRun(t *testing.T) {
	helmMust(t, "lint", "--strict", "--kube-version", "1.37.2", chartDir())
	cases := map[string][]string{
		"daemonset, csr, taints, client CA": {"--set", "mode=daemonset", "--set", "tls.mode=csr",
			"--set", "node.taints[0].key=a,node.taints[0].value=b,node.taints[0].effect=NoSchedule",
			"--set", "node.ip=$(HOST_IP)", "--set", "apiServer.host=127.0.0.1,apiServer.port=16443"},
		"extraNodes, files, no probes": {"--set", "mode=extraNodes,extraNodes.count=3", "--set", "tls.mode=files,tls.secretName=certs",
			"--set", "probes.enabled=false,mountPropagation=None,hostInfo=false", "--set", "priorityClassName=system-node-critical"},
		"extraNodes, none, kept nodes": {"--set", "mode=extraNodes", "--set", "tls.mode=none", "--set", "node.removeOnUninstall=false"},
	}
	for name, sets := range cases {
		t.Run(name, func(t *testing.T) {
			args := append([]string{"template", "dry", chartDir(), "--namespace", "default", "--kube-version", "1.37.2"}, sets...)
			manifests := helmMust(t, args...)
			c := exec.Command(s.env["KUBECTL"], "--kubeconfig", s.env["KUBECONFIG"], "apply", "--dry-run=server", "--validate=strict", "-f", "-")
			c.Stdin = strings.NewReader(manifests)
			out, err := c.CombinedOutput()
			if err != nil {
				t.Fatalf("server-side dry-run refused the manifests: %v\n%s\n---\n%s", err, out, manifests)
			}
			if !strings.Contains(string(out), "(server dry run)") {
				t.Fatalf("no server dry run: %s", out)
			}
		})
	}
}

// TestHelmSchemaRejectsInvalidValues: `helm install` with a bad values file is refused by
// values.schema.json before anything is created, and the message names each bad value.
func TestHelmSchemaRejectsInvalidValues(t *testing.T) {
	ns := newNamespace(t)
	bad := writeValues(t, map[string]any{
		"mode":       "extraNode",
		"extraNodes": map[string]any{"count": 0},
		"node": map[string]any{
			"labels": map[string]any{"not a key": "x"},
			"taints": []any{map[string]any{"key": "a", "effect": "NoRun"}},
		},
		"cri":      map[string]any{"socket": "run/containerd.sock"},
		"logLevel": "loud",
	})
	out, err := helmRun(t, "install", "bad", chartDir(), "--namespace", ns, "-f", bad)
	if err == nil {
		t.Fatalf("helm install accepted invalid values:\n%s", out)
	}
	for _, want := range []string{
		"values don't meet the specifications of the schema",
		"at '/mode': value must be one of 'daemonset', 'extraNodes'",
		"at '/extraNodes/count': minimum: got 0, want 1",
		"at '/node/labels': additional properties 'not a key' not allowed",
		"at '/node/taints/0/effect': value must be one of 'NoSchedule', 'PreferNoSchedule', 'NoExecute'",
		"at '/cri/socket': 'run/containerd.sock' does not match pattern '^/'",
		"at '/logLevel': value must be one of",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("helm's message lacks %q:\n%s", want, out)
		}
	}
	if list := helmMust(t, "list", "--namespace", ns, "--all", "-q"); strings.TrimSpace(list) != "" {
		t.Errorf("a release exists after the refused install: %q", list)
	}
}

// TestHelmExtraNodes installs the chart in extraNodes mode with two nodes, runs a pod on each,
// changes a node label with `helm upgrade`, and uninstalls: the nodes leave the cluster.
func TestHelmExtraNodes(t *testing.T) {
	ns := newNamespace(t)
	release := "vk"
	nodes := []string{helmExtraNodePrefix + "0", helmExtraNodePrefix + "1"}
	hostDir := filepath.Join(s.env["STACK_DIR"], "helm-e2e")
	t.Cleanup(func() { cleanUpExtraNodes(t, ns, release, nodes, hostDir) })

	digest := pushImage(t)
	values := writeValues(t, helmE2EValues(digest, hostDir, "one"))
	helmMust(t, "install", release, chartDir(), "--namespace", ns, "-f", values, "--wait", "--timeout", "3m")

	// The vk-cri pods run on the e2e node, each registers its node.
	agents := listAgents(t, ns, release)
	if len(agents) != 2 {
		t.Fatalf("%d vk-cri pods, want 2", len(agents))
	}
	for _, p := range agents {
		if p.Spec.NodeName != nodeName || !isRunningReady(&p) {
			t.Errorf("vk-cri pod %s: node %s, %s", p.Name, p.Spec.NodeName, describeStatus(&p))
		}
	}
	for i, n := range nodes {
		node := waitNode(t, n, 90*time.Second, "Ready with label "+helmLabelKey+"=one", func(node *v1.Node) bool {
			return nodeReady(node) && node.Labels[helmLabelKey] == "one"
		})
		checkExtraNode(t, node, i, release)
	}

	// A workload pinned to each extra node runs there.
	for _, n := range nodes {
		createPod(t, ns, pinnedPod("work-"+n, n))
	}
	running := map[string]string{}
	for _, n := range nodes {
		p := waitPod(t, ns, "work-"+n, 90*time.Second, "running", isRunningReady)
		running[n] = p.Status.ContainerStatuses[0].ContainerID
	}

	// helm upgrade changes the label; each vk-cri restarts and applies it to its node.
	values = writeValues(t, helmE2EValues(digest, hostDir, "two"))
	helmMust(t, "upgrade", release, chartDir(), "--namespace", ns, "-f", values, "--wait", "--timeout", "3m")
	for _, n := range nodes {
		waitNode(t, n, 90*time.Second, "label "+helmLabelKey+"=two", func(node *v1.Node) bool {
			return nodeReady(node) && node.Labels[helmLabelKey] == "two"
		})
	}
	// The restarted agents adopt the running pods: same containers, no restart.
	for _, n := range nodes {
		p := waitPod(t, ns, "work-"+n, 30*time.Second, "running", isRunningReady)
		if got := p.Status.ContainerStatuses[0]; got.ContainerID != running[n] || got.RestartCount != 0 {
			t.Errorf("pod on %s after the upgrade: container %s (was %s), restarts %d", n, got.ContainerID, running[n], got.RestartCount)
		}
	}

	// Workloads go first (an agent-less node's containers would stay in the runtime), then the
	// release: every object of it, and the nodes.
	for _, n := range nodes {
		if err := s.kube.CoreV1().Pods(ns).Delete(ctxFor(t, 30*time.Second), "work-"+n, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range nodes {
		waitPodGone(t, ns, "work-"+n, 60*time.Second)
	}
	helmMust(t, "uninstall", release, "--namespace", ns, "--wait", "--timeout", "2m")
	for _, n := range nodes {
		waitNodeGone(t, n, 90*time.Second)
	}
	if left := listAgents(t, ns, release); len(left) != 0 {
		t.Errorf("%d vk-cri pods left after uninstall", len(left))
	}
	checkReleaseObjectsGone(t, ns, release)
	for _, n := range nodes {
		if sbs := ownedSandboxes(t, n); len(sbs) != 0 {
			t.Errorf("%d sandboxes of node %s left in the runtime", len(sbs), n)
		}
	}
}

// helmE2EValues are the values of the e2e release: two extra nodes whose agents run on the e2e
// node, with the given value of the test label.
func helmE2EValues(digest, hostDir, label string) map[string]any {
	apiHost, apiPort := apiServerHostPort()
	return map[string]any{
		"mode":  "extraNodes",
		"image": map[string]any{"repository": image("vk-cri"), "digest": digest},
		"extraNodes": map[string]any{
			"count":           2,
			"nameTemplate":    helmExtraNodePrefix + "{{ .Index }}",
			"kubeletPortBase": helmKubeletPortBase,
			"healthzPortBase": helmHealthzPortBase,
			"hostDir":         hostDir,
			"cgroupParent":    "/vk-cri-helm-e2e",
		},
		"cri":       map[string]any{"socket": strings.TrimPrefix(s.env["CRI_ENDPOINT"], "unix://")},
		"apiServer": map[string]any{"host": apiHost, "port": apiPort},
		"node": map[string]any{
			"ip":     s.env["NODE_IP"],
			"labels": map[string]any{helmLabelKey: label},
			"taints": []any{map[string]any{"key": helmTaintKey, "effect": "NoSchedule"}},
		},
		"tls": map[string]any{"mode": "none"},
		// This machine's root mount is private: no mount can propagate back to the host.
		"mountPropagation": "None",
		"nodeSelector":     map[string]any{v1.LabelHostname: nodeName},
		"logLevel":         "debug",
	}
}

// apiServerHostPort splits the stack's APISERVER_URL (https://127.0.0.1:16443).
func apiServerHostPort() (string, int) {
	hostPort := strings.TrimPrefix(s.env["APISERVER_URL"], "https://")
	host, port, _ := strings.Cut(hostPort, ":")
	var p int
	fmt.Sscan(port, &p)
	return host, p
}

// pushImage builds vk-cri's image from bin/vk-cri and pushes it to the local registry; it
// returns the digest, so that the runtime never uses an older image cached under the same tag.
func pushImage(t *testing.T) string {
	t.Helper()
	c := exec.Command(filepath.Join(s.repo, "hack/image.sh"))
	c.Env = append(os.Environ(), "VKCRI_IMAGE_TAG=e2e")
	var stderr bytes.Buffer
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		t.Fatalf("hack/image.sh: %v\n%s", err, stderr.String())
	}
	digest := strings.TrimSpace(string(out))
	if !strings.HasPrefix(digest, "sha256:") {
		t.Fatalf("hack/image.sh printed %q, want a digest", digest)
	}
	return digest
}

func listAgents(t *testing.T, ns, release string) []v1.Pod {
	t.Helper()
	pods, err := s.kube.CoreV1().Pods(ns).List(ctxFor(t, 30*time.Second), metav1.ListOptions{
		LabelSelector: "app.kubernetes.io/name=vk-cri,app.kubernetes.io/instance=" + release,
	})
	if err != nil {
		t.Fatal(err)
	}
	return pods.Items
}

func nodeReady(n *v1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == v1.NodeReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

func waitNode(t *testing.T, name string, timeout time.Duration, what string, cond func(*v1.Node) bool) *v1.Node {
	t.Helper()
	var last *v1.Node
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		n, err := s.kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = n
		return cond(n), nil
	})
	if err != nil {
		var state string
		if last != nil {
			state = fmt.Sprintf("labels %v, ready %v", last.Labels, nodeReady(last))
		}
		t.Fatalf("node %s: waiting for %s: %v (%s)", name, what, err, state)
	}
	return last
}

func waitNodeGone(t *testing.T, name string, timeout time.Duration) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		_, err := s.kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("node %s still in the cluster %v after uninstall", name, timeout)
	}
}

// checkExtraNode: the node's kubelet port, taint and owner are the chart's.
func checkExtraNode(t *testing.T, n *v1.Node, index int, release string) {
	t.Helper()
	if got, want := n.Status.DaemonEndpoints.KubeletEndpoint.Port, int32(helmKubeletPortBase+index); got != want {
		t.Errorf("node %s: kubelet port %d, want %d", n.Name, got, want)
	}
	if n.Labels["app.kubernetes.io/instance"] != release {
		t.Errorf("node %s: labels %v lack the release's", n.Name, n.Labels)
	}
	if len(n.Spec.Taints) != 1 || n.Spec.Taints[0].Key != helmTaintKey || n.Spec.Taints[0].Effect != v1.TaintEffectNoSchedule {
		t.Errorf("node %s: taints %v, want %s:NoSchedule", n.Name, n.Spec.Taints, helmTaintKey)
	}
	if len(n.OwnerReferences) != 1 || n.OwnerReferences[0].Kind != "ClusterRole" || n.OwnerReferences[0].Name != release+"-vk-cri" {
		t.Errorf("node %s: owners %v, want the ClusterRole %s-vk-cri", n.Name, n.OwnerReferences, release)
	}
}

// pinnedPod runs on the extra node through a node selector and tolerates its taint.
func pinnedPod(name, node string) *v1.Pod {
	p := basePod(name, v1.Container{Name: "app", Image: image("busybox:latest"), Command: []string{"sleep", "3600"}})
	p.Spec.NodeSelector = map[string]string{v1.LabelHostname: node}
	p.Spec.Tolerations = []v1.Toleration{{Key: helmTaintKey, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}}
	return p
}

func checkReleaseObjectsGone(t *testing.T, ns, release string) {
	t.Helper()
	ctx := ctxFor(t, 30*time.Second)
	sel := metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + release}
	if l, err := s.kube.AppsV1().Deployments(ns).List(ctx, sel); err != nil || len(l.Items) != 0 {
		t.Errorf("deployments left: %v %v", l, err)
	}
	if _, err := s.kube.CoreV1().ServiceAccounts(ns).Get(ctx, release+"-vk-cri", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("service account left: %v", err)
	}
	if _, err := s.kube.RbacV1().ClusterRoles().Get(ctx, release+"-vk-cri", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("cluster role left: %v", err)
	}
	if _, err := s.kube.RbacV1().ClusterRoleBindings().Get(ctx, release+"-vk-cri", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("cluster role binding left: %v", err)
	}
}

func ownedSandboxes(t *testing.T, node string) []*runtimeapi.PodSandbox {
	t.Helper()
	sbs, err := s.runtime.Runtime.ListPodSandbox(ctxFor(t, 30*time.Second),
		&runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{cri.OwnerLabel: node}})
	if err != nil {
		t.Fatalf("listing sandboxes: %v", err)
	}
	return sbs
}

// cleanUpExtraNodes removes whatever a failed run left: the release, the nodes, their sandboxes
// and files.
func cleanUpExtraNodes(t *testing.T, ns, release string, nodes []string, hostDir string) {
	if out, err := helmRun(t, "uninstall", release, "--namespace", ns, "--wait", "--timeout", "1m"); err != nil &&
		!strings.Contains(out, "not found") {
		t.Logf("cleanup: helm uninstall: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, n := range nodes {
		_ = s.kube.CoreV1().Nodes().Delete(ctx, n, metav1.DeleteOptions{})
		sbs, err := s.runtime.Runtime.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{cri.OwnerLabel: n}})
		if err != nil {
			continue
		}
		for _, sb := range sbs {
			_ = s.runtime.Runtime.StopPodSandbox(ctx, sb.Id)
			_ = s.runtime.Runtime.RemovePodSandbox(ctx, sb.Id)
		}
	}
	_ = os.RemoveAll(hostDir)
}
