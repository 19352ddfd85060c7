//go:build e2e

package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// The chart's e2e: charts/vk-cri checked and installed with the helm CLI (hack/build-helm.sh)
// against the local stack.

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
		t.Fatalf("helm %s: %v\n%s%s", strings.Join(args, " "), err, out, releaseDiagnostics(t, args))
	}
	return out
}

// releaseDiagnostics describes the pods of the namespace a failed helm command worked in, and
// the last lines of their logs: what a `--wait` that timed out waited for.
func releaseDiagnostics(t *testing.T, helmArgs []string) string {
	t.Helper()
	i := slices.Index(helmArgs, "--namespace")
	if i < 0 || i+1 >= len(helmArgs) {
		return ""
	}
	ns := helmArgs[i+1]
	var b strings.Builder
	pods := kubectl(t, 30*time.Second, nil, "", "get", "pods", "-n", ns, "-o", "wide")
	fmt.Fprintf(&b, "\npods of %s:\n%s%s", ns, pods.stdout, pods.stderr)
	logs := kubectl(t, 30*time.Second, nil, "", "logs", "-n", ns, "--all-containers", "--prefix", "--tail=15", "-l", "app.kubernetes.io/name=vk-cri")
	fmt.Fprintf(&b, "their logs:\n%s%s", logs.stdout, logs.stderr)
	return b.String()
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
			"--set", "node.ip=$(HOST_IP)", "--set", "apiServer.host=127.0.0.1,apiServer.port=16443",
			"--set", "node.clusterDNS={10.0.0.10},node.clusterDomain=cluster.local,stats.evictionHard=memory.available<200Mi"},
		"extraNodes, files, no probes": {"--set", "mode=extraNodes,extraNodes.count=3", "--set", "tls.mode=files,tls.secretName=certs",
			"--set", "probes.enabled=false,mountPropagation=None,hostInfo=false,stats.enabled=false", "--set", "priorityClassName=system-node-critical"},
		"extraNodes, none, kept nodes": {"--set", "mode=extraNodes", "--set", "tls.mode=none", "--set", "node.removeOnUninstall=false"},
		"daemonset on the host's runtime, no drain": {"--set", "runtime.mode=host", "--set", "uninstallDrain.enabled=false",
			"--set", "image.repository=127.0.0.1:5000/vk-cri/vk-cri"},
		"extraNodes, bundled, per-node capacity and subnets": {"--set", "mode=extraNodes,extraNodes.count=2",
			"--set", "extraNodes.nodes[1].maxPods=9,extraNodes.nodes[1].kubeReserved.cpu=100m", "--set", "network.podCIDR=10.77.0.0/16,network.bridge=vkx"},
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
