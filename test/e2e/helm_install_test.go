//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-cri/vk-cri/cri"
)

// The chart installed, upgraded and uninstalled in both modes. Its vk-cri pods run on the e2e
// node (nodeName), in the host network, against the stack's containerd, and register nodes with
// these names and ports.
const (
	helmExtraNodePrefix = "helm-x"
	helmKubeletPortBase = 10280
	helmHealthzPortBase = 10284
	helmTaintKey        = "vk-cri.io/helm-e2e"
	helmLabelKey        = "vk-cri.io/helm-e2e-label"
	// The daemonset release's node: kubelet API on this port, healthz on the next.
	helmDaemonSetKubeletPort = 10286
)

// TestHelmExtraNodes installs the chart in extraNodes mode with two nodes, runs a pod on each,
// changes a node label with `helm upgrade`, and uninstalls: the nodes leave the cluster.
func TestHelmExtraNodes(t *testing.T) {
	ns := newNamespace(t)
	release := "vk"
	nodes := []string{helmExtraNodePrefix + "0", helmExtraNodePrefix + "1"}
	hostDir := filepath.Join(s.env["STACK_DIR"], "helm-e2e")
	t.Cleanup(func() { cleanUpRelease(t, ns, release, nodes, hostDir) })

	digest := pushImage(t)
	approveServingCSRs(t, "system:serviceaccount:"+ns+":"+release+"-vk-cri", nodes)
	values := writeValues(t, extraNodesValues(digest, hostDir, "one"))
	helmMust(t, "install", release, chartDir(), "--namespace", ns, "-f", values, "--wait", "--timeout", "3m")

	checkAgents(t, ns, release, len(nodes))
	for i, n := range nodes {
		node := waitNode(t, n, 90*time.Second, "Ready with label "+helmLabelKey+"=one", func(node *v1.Node) bool {
			return nodeReady(node) && node.Labels[helmLabelKey] == "one"
		})
		checkReleaseNode(t, node, int32(helmKubeletPortBase+i), release)
	}
	running := runPinnedPods(t, ns, nodes)

	// helm upgrade changes the label; each vk-cri restarts and applies it to its node.
	values = writeValues(t, extraNodesValues(digest, hostDir, "two"))
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

	uninstallAndCheck(t, ns, release, nodes)
}

// TestHelmDaemonSet installs the chart in daemonset mode on the e2e node only: its vk-cri
// registers the node "<host node>-vk" (name and IP from the downward API), runs a pod, and
// leaves with the release.
func TestHelmDaemonSet(t *testing.T) {
	ns := newNamespace(t)
	release := "ds"
	node := nodeName + "-vk"
	hostDir := filepath.Join(s.env["STACK_DIR"], "helm-ds")
	t.Cleanup(func() { cleanUpRelease(t, ns, release, []string{node}, hostDir) })

	digest := pushImage(t)
	approveServingCSRs(t, "system:serviceaccount:"+ns+":"+release+"-vk-cri", []string{node})
	values := commonValues(digest, "one")
	values["mode"] = "daemonset"
	values["daemonset"] = map[string]any{
		"kubeletPort": helmDaemonSetKubeletPort,
		"healthzPort": helmDaemonSetKubeletPort + 1,
		"rootDir":     filepath.Join(hostDir, "root"),
		"podLogDir":   filepath.Join(hostDir, "pods-logs"),
		"cgroupRoot":  "/vk-cri-helm-ds",
	}
	values["node"].(map[string]any)["ip"] = "$(HOST_IP)"
	helmMust(t, "install", release, chartDir(), "--namespace", ns, "-f", writeValues(t, values), "--wait", "--timeout", "3m")

	checkAgents(t, ns, release, 1)
	n := waitNode(t, node, 90*time.Second, "Ready", nodeReady)
	checkReleaseNode(t, n, helmDaemonSetKubeletPort, release)
	for _, a := range n.Status.Addresses {
		if a.Type == v1.NodeInternalIP && a.Address != s.env["NODE_IP"] {
			t.Errorf("node %s: InternalIP %s, want the host's %s (status.hostIP)", node, a.Address, s.env["NODE_IP"])
		}
	}
	runPinnedPods(t, ns, []string{node})
	uninstallAndCheck(t, ns, release, []string{node})
}

// checkAgents waits until the release's vk-cri pods run and are ready on the e2e node (helm's
// --wait lets a DaemonSet's rollout count maxUnavailable pods as done).
func checkAgents(t *testing.T, ns, release string, want int) {
	t.Helper()
	var agents []v1.Pod
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		agents = listAgents(t, ns, release)
		if len(agents) != want {
			return false, nil
		}
		for _, p := range agents {
			if p.Spec.NodeName != nodeName || !isRunningReady(&p) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		for _, p := range agents {
			t.Logf("vk-cri pod %s: node %s, %s", p.Name, p.Spec.NodeName, describeStatus(&p))
		}
		t.Fatalf("%d vk-cri pods, want %d running and ready on %s", len(agents), want, nodeName)
	}
}

// runPinnedPods runs a pod on each node and reads its log through the API server, from the
// node's kubelet API (serving certificate from the approved CSR, the API server's client
// certificate checked against the client CA). It returns each pod's container ID.
func runPinnedPods(t *testing.T, ns string, nodes []string) map[string]string {
	t.Helper()
	for _, n := range nodes {
		createPod(t, ns, pinnedPod("work-"+n, n))
	}
	running := map[string]string{}
	for _, n := range nodes {
		p := waitPod(t, ns, "work-"+n, 90*time.Second, "running", isRunningReady)
		running[n] = p.Status.ContainerStatuses[0].ContainerID
	}
	for _, n := range nodes {
		waitLogContains(t, ns, "work-"+n, "hello from "+n)
		waitPodStats(t, ns, "work-"+n, n)
	}
	return running
}

// waitPodStats: the node's /stats/summary (its vk-cri's cAdvisor, reading the host's cgroups
// mounted into the container) measures the pod.
func waitPodStats(t *testing.T, ns, pod, node string) {
	t.Helper()
	var lastErr error
	err := wait.PollUntilContextTimeout(context.Background(), time.Second, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		sum, err := summaryOf(ctx, node)
		if lastErr = err; err != nil {
			return false, nil
		}
		ps := podInSummary(sum, ns, pod)
		return sum.Node.NodeName == node && sum.Node.Memory != nil && positive(sum.Node.Memory.WorkingSetBytes) &&
			ps != nil && ps.Memory != nil && positive(ps.Memory.WorkingSetBytes), nil
	})
	if err != nil {
		t.Errorf("/stats/summary of node %s: no memory figures for pod %s/%s (last error %v)", node, ns, pod, lastErr)
	}
}

// uninstallAndCheck deletes the workloads first (an agent-less node's containers would stay in
// the runtime), then the release: every object of it goes, and the nodes leave the cluster.
func uninstallAndCheck(t *testing.T, ns, release string, nodes []string) {
	t.Helper()
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
	// helm's --wait covers the workloads; their pods end within their grace period.
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		return len(listAgents(t, ns, release)) == 0, nil
	})
	if err != nil {
		t.Errorf("%d vk-cri pods left 60s after uninstall", len(listAgents(t, ns, release)))
	}
	checkReleaseObjectsGone(t, ns, release)
	for _, n := range nodes {
		if sbs := ownedSandboxes(t, n); len(sbs) != 0 {
			t.Errorf("%d sandboxes of node %s left in the runtime", len(sbs), n)
		}
	}
}

// commonValues are the values both e2e releases share: agents on the e2e node, in the host
// network, on the stack's containerd and API server, with the test label and taint.
func commonValues(digest, label string) map[string]any {
	apiHost, apiPort := apiServerHostPort()
	return map[string]any{
		"image": map[string]any{"repository": image("vk-cri"), "digest": digest},
		// The stack's containerd on the host (runtime.mode host) and the minimal image: these
		// agents run as pods of the e2e node, beside it (helm_runtime_test.go runs the default,
		// bundled runtime under the upstream kubelet).
		"runtime":   map[string]any{"mode": "host"},
		"cri":       map[string]any{"socket": strings.TrimPrefix(s.env["CRI_ENDPOINT"], "unix://")},
		"apiServer": map[string]any{"host": apiHost, "port": apiPort},
		"node": map[string]any{
			"labels": map[string]any{helmLabelKey: label},
			"taints": []any{map[string]any{"key": helmTaintKey, "effect": "NoSchedule"}},
		},
		// Serving certificates from CSRs (approved by the test), client CA from kube-root-ca.crt.
		"tls": map[string]any{"mode": "csr"},
		// This machine's root mount is private: no mount can propagate back to the host.
		"mountPropagation": "None",
		"nodeSelector":     map[string]any{v1.LabelHostname: nodeName},
		"logLevel":         "debug",
	}
}

// extraNodesValues: two extra nodes with the given value of the test label.
func extraNodesValues(digest, hostDir, label string) map[string]any {
	values := commonValues(digest, label)
	values["mode"] = "extraNodes"
	values["extraNodes"] = map[string]any{
		"count":           2,
		"nameTemplate":    helmExtraNodePrefix + "{{ .Index }}",
		"kubeletPortBase": helmKubeletPortBase,
		"healthzPortBase": helmHealthzPortBase,
		"hostDir":         hostDir,
		"cgroupParent":    "/vk-cri-helm-e2e",
	}
	values["node"].(map[string]any)["ip"] = s.env["NODE_IP"]
	return values
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

// checkReleaseNode: the node's kubelet port, labels, taint and owner are the chart's.
func checkReleaseNode(t *testing.T, n *v1.Node, port int32, release string) {
	t.Helper()
	if got, want := n.Status.DaemonEndpoints.KubeletEndpoint.Port, port; got != want {
		t.Errorf("node %s: kubelet port %d, want %d", n.Name, got, want)
	}
	if n.Labels["app.kubernetes.io/instance"] != release {
		t.Errorf("node %s: labels %v lack the release's", n.Name, n.Labels)
	}
	// The node lifecycle controller may add its own (not-ready) taints for a moment.
	registered := false
	for _, taint := range n.Spec.Taints {
		registered = registered || (taint.Key == helmTaintKey && taint.Value == "" && taint.Effect == v1.TaintEffectNoSchedule)
	}
	if !registered {
		t.Errorf("node %s: taints %v lack %s:NoSchedule", n.Name, n.Spec.Taints, helmTaintKey)
	}
	if len(n.OwnerReferences) != 1 || n.OwnerReferences[0].Kind != "ClusterRole" || n.OwnerReferences[0].Name != release+"-vk-cri" {
		t.Errorf("node %s: owners %v, want the ClusterRole %s-vk-cri", n.Name, n.OwnerReferences, release)
	}
}

// pinnedPod runs on the extra node through a node selector and tolerates its taint.
func pinnedPod(name, node string) *v1.Pod {
	p := basePod(name, busybox("app", "echo hello from "+node+"; exec sleep 3600"))
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

// cleanUpRelease removes whatever a failed run left: the release, the nodes, their sandboxes
// and files.
func cleanUpRelease(t *testing.T, ns, release string, nodes []string, hostDir string) {
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

// approveServingCSRs approves, until the test ends, the kubelet-serving CSRs that user makes for
// the given nodes, as a cluster admin does for kubelets with serverTLSBootstrap.
func approveServingCSRs(t *testing.T, user string, nodes []string) {
	t.Helper()
	subjects := map[string]bool{}
	for _, n := range nodes {
		subjects["system:node:"+n] = true
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		_ = wait.PollUntilContextCancel(ctx, 300*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			csrs, err := s.kube.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, nil
			}
			for i := range csrs.Items {
				csr := &csrs.Items[i]
				if csr.Spec.SignerName != certificatesv1.KubeletServingSignerName || csr.Spec.Username != user || len(csr.Status.Conditions) > 0 {
					continue
				}
				block, _ := pem.Decode(csr.Spec.Request)
				if block == nil {
					continue
				}
				req, err := x509.ParseCertificateRequest(block.Bytes)
				if err != nil || !subjects[req.Subject.CommonName] {
					continue
				}
				csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
					Type: certificatesv1.CertificateApproved, Status: v1.ConditionTrue,
					Reason: "E2EApprove", Message: "approved by the helm e2e test",
				})
				_, _ = s.kube.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{})
			}
			return false, nil
		})
	}()
}

// waitLogContains polls the container's log through the API server until it contains want.
func waitLogContains(t *testing.T, ns, pod, want string) {
	t.Helper()
	var last string
	var lastErr error
	err := wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		b, err := s.kube.CoreV1().Pods(ns).GetLogs(pod, &v1.PodLogOptions{}).Do(ctx).Raw()
		last, lastErr = string(b), err
		return err == nil && strings.Contains(last, want), nil
	})
	if err != nil {
		t.Fatalf("logs of %s/%s: want %q, got %q (error %v)", ns, pod, want, last, lastErr)
	}
}
