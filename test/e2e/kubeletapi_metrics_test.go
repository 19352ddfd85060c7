//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// nodeProxyGet reads path of the e2e node's kubelet API through the API server's node proxy
// (which verifies the node's serving certificate and presents its own client certificate).
func nodeProxyGet(ctx context.Context, path string) ([]byte, error) {
	return s.kube.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", nodeName, "proxy", path).DoRaw(ctx)
}

// scrapeMetrics parses the node's /metrics.
func scrapeMetrics(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	b, err := nodeProxyGet(ctxFor(t, 30*time.Second), "metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	return families
}

// sample is the value of family's series whose labels include want (a counter, gauge, or a
// histogram's count).
func sample(families map[string]*dto.MetricFamily, family string, want map[string]string) float64 {
	f := families[family]
	if f == nil {
		return 0
	}
	var total float64
	for _, m := range f.Metric {
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range want {
			match = match && labels[k] == v
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			total += m.Counter.GetValue()
		case m.Gauge != nil:
			total += m.Gauge.GetValue()
		case m.Histogram != nil:
			total += float64(m.Histogram.GetSampleCount())
		}
	}
	return total
}

func TestKubeletAPIMetricsMove(t *testing.T) {
	waitKubeletAPIServing(t)
	before := scrapeMetrics(t)
	ns := newNamespace(t)
	createPod(t, ns, basePod("counted", v1.Container{Name: "main", Image: image("busybox:latest"), Command: []string{"sleep", "3600"}}))
	createPod(t, ns, basePod("missing-image", v1.Container{Name: "main", Image: image("does-not-exist:latest")}))
	waitPod(t, ns, "counted", 2*time.Minute, "Running", isRunningReady)
	waitPod(t, ns, "missing-image", 2*time.Minute, "ErrImagePull or ImagePullBackOff", func(p *v1.Pod) bool {
		return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Waiting != nil &&
			strings.Contains(p.Status.ContainerStatuses[0].State.Waiting.Reason, "Image")
	})

	type growth struct {
		family string
		labels map[string]string
	}
	grows := []growth{
		{"kubelet_pod_start_duration_seconds", nil},
		{"kubelet_pod_worker_duration_seconds", map[string]string{"operation_type": "create"}},
		{"kubelet_pod_worker_duration_seconds", map[string]string{"operation_type": "sync"}},
		{"kubelet_runtime_operations_total", map[string]string{"operation_type": "run_podsandbox"}},
		{"kubelet_runtime_operations_total", map[string]string{"operation_type": "create_container"}},
		{"kubelet_runtime_operations_duration_seconds", map[string]string{"operation_type": "start_container"}},
		{"kubelet_runtime_operations_errors_total", map[string]string{"operation_type": "pull_image"}},
		{"kubelet_http_requests_total", map[string]string{"method": "GET", "path": "metrics", "server_type": "readwrite", "long_running": "false"}},
		{"kubelet_http_requests_duration_seconds", map[string]string{"method": "GET", "path": "metrics"}},
	}
	var after map[string]*dto.MetricFamily
	// Gauges follow the runtime's listing (every second): wait for them rather than sleeping.
	err := wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		after = scrapeMetrics(t)
		return sample(after, "kubelet_running_pods", nil) >= sample(before, "kubelet_running_pods", nil)+2 &&
			sample(after, "kubelet_running_containers", map[string]string{"container_state": "running"}) >=
				sample(before, "kubelet_running_containers", map[string]string{"container_state": "running"})+1, nil
	})
	if err != nil {
		t.Errorf("kubelet_running_pods %v → %v, running containers %v → %v",
			sample(before, "kubelet_running_pods", nil), sample(after, "kubelet_running_pods", nil),
			sample(before, "kubelet_running_containers", map[string]string{"container_state": "running"}),
			sample(after, "kubelet_running_containers", map[string]string{"container_state": "running"}))
	}
	for _, g := range grows {
		if b, a := sample(before, g.family, g.labels), sample(after, g.family, g.labels); a <= b {
			t.Errorf("%s%v did not grow: %v → %v", g.family, g.labels, b, a)
		}
	}
	for _, name := range []string{"kubelet_node_name", "process_resident_memory_bytes", "go_goroutines"} {
		if after[name] == nil {
			t.Errorf("%s missing", name)
		}
	}
}

func TestKubeletAPIConfigzPodsRunningPods(t *testing.T) {
	waitKubeletAPIServing(t)
	ns := newNamespace(t)
	createPod(t, ns, basePod("listed", v1.Container{Name: "main", Image: image("busybox:latest"), Command: []string{"sleep", "3600"}}))
	pod := waitPod(t, ns, "listed", 2*time.Minute, "Running", isRunningReady)
	ctx := ctxFor(t, time.Minute)

	b, err := nodeProxyGet(ctx, "configz")
	if err != nil {
		t.Fatalf("GET /configz: %v", err)
	}
	var configz struct {
		KubeletConfig struct {
			Port               int  `json:"port"`
			ServerTLSBootstrap bool `json:"serverTLSBootstrap"`
			Authorization      struct {
				Mode string `json:"mode"`
			} `json:"authorization"`
		} `json:"kubeletconfig"`
		VKCRI map[string]string `json:"vkcri"`
	}
	if err := json.Unmarshal(b, &configz); err != nil {
		t.Fatalf("/configz: %v: %s", err, b)
	}
	if configz.KubeletConfig.Port != atoi(t, nodePort) || !configz.KubeletConfig.ServerTLSBootstrap ||
		configz.KubeletConfig.Authorization.Mode != "Webhook" || configz.VKCRI["nodename"] != nodeName {
		t.Errorf("/configz: %s", b)
	}

	var list v1.PodList
	if b, err = nodeProxyGet(ctx, "pods"); err != nil || json.Unmarshal(b, &list) != nil {
		t.Fatalf("GET /pods: %v %s", err, b)
	}
	found := false
	for _, p := range list.Items {
		found = found || p.UID == pod.UID
	}
	if !found {
		t.Errorf("/pods does not list %s/listed", ns)
	}

	var running v1.PodList
	if b, err = nodeProxyGet(ctx, "runningpods/"); err != nil || json.Unmarshal(b, &running) != nil {
		t.Fatalf("GET /runningpods/: %v %s", err, b)
	}
	found = false
	for _, p := range running.Items {
		if p.Namespace == ns && p.Name == "listed" {
			found = len(p.Spec.Containers) == 1 && p.Spec.Containers[0].Name == "main"
		}
	}
	if !found {
		t.Errorf("/runningpods/ does not list %s/listed with its container: %s", ns, b)
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatal(err)
	}
	return n
}
