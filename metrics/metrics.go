// Package metrics is vk-cri's own Prometheus metrics, under the kubelet's names where vk-cri
// measures the same thing (kubelet_running_pods, kubelet_pod_start_duration_seconds,
// kubelet_runtime_operations_total ...). A Recorder is handed to the parts that measure; nothing
// is registered globally.
package metrics

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Buckets as the kubelet defines them, so that dashboards built for it read vk-cri the same way.
var (
	podStartBuckets         = []float64{0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600}
	runtimeOperationBuckets = prometheus.ExponentialBuckets(.005, 2.5, 14)
)

// Recorder collects vk-cri's metrics into its own registry.
type Recorder struct {
	registry *prometheus.Registry

	podWorker        *prometheus.HistogramVec
	podStart         prometheus.Histogram
	runtimeOps       *prometheus.CounterVec
	runtimeOpsErrors *prometheus.CounterVec
	runtimeOpsTime   *prometheus.HistogramVec
	runningPods      prometheus.Gauge
	runningCont      *prometheus.GaugeVec
	httpRequests     *prometheus.CounterVec
	httpDuration     *prometheus.HistogramVec
	httpInflight     *prometheus.GaugeVec
	imageGC          *prometheus.CounterVec

	mu          sync.Mutex
	knownStates map[string]bool
}

// New makes a recorder for node; its registry also has the Go runtime and process collectors,
// as the kubelet's /metrics does.
func New(node string) *Recorder {
	reg := prometheus.NewRegistry()
	m := metricsIn{promauto.With(reg)}
	r := &Recorder{
		registry: reg,
		podWorker: m.histogramVec("kubelet_pod_worker_duration_seconds",
			"Duration in seconds to sync a single pod. Broken down by operation type: create, update, sync or kill.",
			prometheus.DefBuckets, "operation_type"),
		podStart: m.f.NewHistogram(prometheus.HistogramOpts{
			Name:    "kubelet_pod_start_duration_seconds",
			Help:    "Duration in seconds from vk-cri seeing a pod for the first time to the pod starting to run.",
			Buckets: podStartBuckets,
		}),
		runtimeOps: m.counterVec("kubelet_runtime_operations_total",
			"Cumulative number of runtime operations by operation type.", "operation_type"),
		runtimeOpsErrors: m.counterVec("kubelet_runtime_operations_errors_total",
			"Cumulative number of runtime operation errors by operation type.", "operation_type"),
		runtimeOpsTime: m.histogramVec("kubelet_runtime_operations_duration_seconds",
			"Duration in seconds of runtime operations. Broken down by operation type.",
			runtimeOperationBuckets, "operation_type"),
		runningPods: m.f.NewGauge(prometheus.GaugeOpts{
			Name: "kubelet_running_pods",
			Help: "Number of pods that have a running pod sandbox.",
		}),
		runningCont: m.gaugeVec("kubelet_running_containers",
			"Number of containers currently running, by container state.", "container_state"),
		httpRequests: m.counterVec("kubelet_http_requests_total",
			"Number of the http requests received since the server started", httpLabels...),
		httpDuration: m.histogramVec("kubelet_http_requests_duration_seconds",
			"Duration in seconds to serve http requests", prometheus.DefBuckets, httpLabels...),
		httpInflight: m.gaugeVec("kubelet_http_inflight_requests",
			"Number of the inflight http requests", httpLabels...),
		imageGC:     newImageGCCounter(m),
		knownStates: map[string]bool{},
	}
	m.gaugeVec("kubelet_node_name", "The node's name. The count is always 1.", "node").WithLabelValues(node).Set(1)
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return r
}

// metricsIn makes metrics registered in one registry (promauto's factory), for the vectors
// that need only a name, a help text, labels and perhaps buckets.
type metricsIn struct{ f promauto.Factory }

func (m metricsIn) counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return m.f.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

func (m metricsIn) gaugeVec(name, help string, labels ...string) *prometheus.GaugeVec {
	return m.f.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
}

func (m metricsIn) histogramVec(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	return m.f.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
}

var httpLabels = []string{"method", "path", "server_type", "long_running"}

// HTTPRequest counts one kubelet API request and its time in flight until finished is called.
func (r *Recorder) HTTPRequest(method, path, serverType string, longRunning bool) (finished func()) {
	labels := []string{method, path, serverType, strconv.FormatBool(longRunning)}
	start := time.Now()
	r.httpRequests.WithLabelValues(labels...).Inc()
	inflight := r.httpInflight.WithLabelValues(labels...)
	inflight.Inc()
	return func() {
		inflight.Dec()
		r.httpDuration.WithLabelValues(labels...).Observe(time.Since(start).Seconds())
	}
}

// Handler serves the registry in the Prometheus text format.
func (r *Recorder) Handler() http.Handler {
	return promhttp.HandlerFor(r.registry, promhttp.HandlerOpts{})
}

// Registry is where other parts may register collectors of their own.
func (r *Recorder) Registry() prometheus.Registerer { return r.registry }

// RuntimeOperation records one CRI call (operation named as the kubelet names it: run_podsandbox,
// create_container ...).
func (r *Recorder) RuntimeOperation(operation string, took time.Duration, err error) {
	r.runtimeOps.WithLabelValues(operation).Inc()
	r.runtimeOpsTime.WithLabelValues(operation).Observe(took.Seconds())
	if err != nil {
		r.runtimeOpsErrors.WithLabelValues(operation).Inc()
	}
}

// PodWorker records one sync of one pod.
func (r *Recorder) PodWorker(operation string, took time.Duration) {
	r.podWorker.WithLabelValues(operation).Observe(took.Seconds())
}

// PodStarted records how long a pod took from being first seen to running.
func (r *Recorder) PodStarted(took time.Duration) {
	r.podStart.Observe(took.Seconds())
}

// RuntimeState sets the running pods and the containers by state (running, exited, created,
// unknown) from the latest listing of the runtime; a state absent from containers drops to 0.
func (r *Recorder) RuntimeState(runningPods int, containers map[string]int) {
	r.runningPods.Set(float64(runningPods))
	r.mu.Lock()
	defer r.mu.Unlock()
	for state := range containers {
		r.knownStates[state] = true
	}
	for state := range r.knownStates {
		r.runningCont.WithLabelValues(state).Set(float64(containers[state]))
	}
}
