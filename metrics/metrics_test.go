package metrics

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/vk-cri/vk-cri/internal/golden"
)

func scrape(t *testing.T, r *Recorder) string {
	t.Helper()
	w := httptest.NewRecorder()
	r.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	return w.Body.String()
}

func TestRecorderExposesKubeletNames(t *testing.T) {
	r := New("node-1")
	r.RuntimeOperation("run_podsandbox", 300*time.Millisecond, nil)
	r.RuntimeOperation("run_podsandbox", 10*time.Millisecond, errors.New("boom"))
	r.PodWorker("create", 2*time.Second)
	r.PodStarted(1500 * time.Millisecond)
	r.RuntimeState(2, map[string]int{"running": 3, "exited": 1})
	r.RuntimeState(1, map[string]int{"running": 1})
	r.HTTPRequest("GET", "pods", "readwrite", false)()
	open := r.HTTPRequest("POST", "exec", "readwrite", true)

	out := scrape(t, r)
	open()
	for _, want := range []string{
		`kubelet_node_name{node="node-1"} 1`,
		`kubelet_runtime_operations_total{operation_type="run_podsandbox"} 2`,
		`kubelet_runtime_operations_errors_total{operation_type="run_podsandbox"} 1`,
		`kubelet_runtime_operations_duration_seconds_count{operation_type="run_podsandbox"} 2`,
		`kubelet_pod_worker_duration_seconds_count{operation_type="create"} 1`,
		`kubelet_pod_start_duration_seconds_bucket{le="2"} 1`,
		`kubelet_pod_start_duration_seconds_bucket{le="1"} 0`,
		`kubelet_running_pods 1`,
		`kubelet_running_containers{container_state="running"} 1`,
		`kubelet_running_containers{container_state="exited"} 0`,
		`process_resident_memory_bytes`,
		`go_goroutines`,
		`kubelet_http_requests_total{long_running="false",method="GET",path="pods",server_type="readwrite"} 1`,
		`kubelet_http_inflight_requests{long_running="false",method="GET",path="pods",server_type="readwrite"} 0`,
		`kubelet_http_inflight_requests{long_running="true",method="POST",path="exec",server_type="readwrite"} 1`,
		`kubelet_http_requests_duration_seconds_count{long_running="false",method="GET",path="pods",server_type="readwrite"} 1`,
	} {
		if !strings.Contains(out, want+"\n") && !strings.Contains(out, want+" ") {
			t.Errorf("missing %q", want)
		}
	}
}

// The HELP, TYPE and buckets of every kubelet_* metric, as dashboards and the kubelet's
// documentation know them (testdata/metadata.golden).
func TestRecorderMetadata(t *testing.T) {
	r := New("node-1")
	r.RuntimeOperation("run_podsandbox", time.Millisecond, errors.New("boom"))
	r.PodWorker("create", time.Millisecond)
	r.RuntimeState(1, map[string]int{"running": 1})
	r.HTTPRequest("GET", "pods", "readwrite", false)()
	r.ImageGarbageCollected("space")
	var lines []string
	for _, l := range strings.Split(scrape(t, r), "\n") {
		// Bucket boundaries too: the kubelet's, so that its dashboards read vk-cri the same way.
		if strings.HasPrefix(l, "# HELP kubelet_") || strings.HasPrefix(l, "# TYPE kubelet_") ||
			(strings.HasPrefix(l, "kubelet_") && strings.Contains(l, "_bucket{")) {
			lines = append(lines, l)
		}
	}
	got := strings.Join(lines, "\n") + "\n"
	golden.Check(t, "testdata/metadata.golden", []byte(got))
}
