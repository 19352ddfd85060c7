package stats

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// The kubelet's /metrics/resource series, which metrics-server reads.
var (
	containerLabels = []string{"container", "pod", "namespace"}
	podLabels       = []string{"pod", "namespace"}

	nodeCPUDesc         = prometheus.NewDesc("node_cpu_usage_seconds_total", "Cumulative cpu time consumed by the node in core-seconds", nil, nil)
	nodeMemoryDesc      = prometheus.NewDesc("node_memory_working_set_bytes", "Current working set of the node in bytes", nil, nil)
	nodeSwapDesc        = prometheus.NewDesc("node_swap_usage_bytes", "Current swap usage of the node in bytes. Reported only on non-windows systems", nil, nil)
	containerStartDesc  = prometheus.NewDesc("container_start_time_seconds", "Start time of the container since unix epoch in seconds", containerLabels, nil)
	containerCPUDesc    = prometheus.NewDesc("container_cpu_usage_seconds_total", "Cumulative cpu time consumed by the container in core-seconds", containerLabels, nil)
	containerMemoryDesc = prometheus.NewDesc("container_memory_working_set_bytes", "Current working set of the container in bytes", containerLabels, nil)
	containerSwapDesc   = prometheus.NewDesc("container_swap_usage_bytes", "Current amount of the container swap usage in bytes. Reported only on non-windows systems", containerLabels, nil)
	podCPUDesc          = prometheus.NewDesc("pod_cpu_usage_seconds_total", "Cumulative cpu time consumed by the pod in core-seconds", podLabels, nil)
	podMemoryDesc       = prometheus.NewDesc("pod_memory_working_set_bytes", "Current working set of the pod in bytes", podLabels, nil)
	podSwapDesc         = prometheus.NewDesc("pod_swap_usage_bytes", "Current amount of the pod swap usage in bytes. Reported only on non-windows systems", podLabels, nil)
	scrapeErrorDesc     = prometheus.NewDesc("scrape_error", "1 if there was an error while getting container metrics, 0 otherwise", nil, nil)
	resourceErrorDesc   = prometheus.NewDesc("resource_scrape_error", "1 if there was an error while getting container metrics, 0 otherwise", nil, nil)
)

// ResourceMetrics turns a summary (nil when it could not be made) into the kubelet's resource
// metrics, each sample stamped with the time it was measured.
func ResourceMetrics(s *statsapi.Summary) ([]*dto.MetricFamily, error) {
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(resourceCollector{summary: s}); err != nil {
		return nil, err
	}
	return reg.Gather()
}

type resourceCollector struct {
	summary *statsapi.Summary
}

func (resourceCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{nodeCPUDesc, nodeMemoryDesc, nodeSwapDesc, containerStartDesc, containerCPUDesc,
		containerMemoryDesc, containerSwapDesc, podCPUDesc, podMemoryDesc, podSwapDesc, scrapeErrorDesc, resourceErrorDesc} {
		ch <- d
	}
}

func (rc resourceCollector) Collect(ch chan<- prometheus.Metric) {
	failed := 0.0
	if rc.summary == nil {
		failed = 1
	}
	ch <- prometheus.MustNewConstMetric(scrapeErrorDesc, prometheus.GaugeValue, failed)
	ch <- prometheus.MustNewConstMetric(resourceErrorDesc, prometheus.GaugeValue, failed)
	if rc.summary == nil {
		return
	}
	n := rc.summary.Node
	emitCPU(ch, nodeCPUDesc, n.CPU)
	emitMemory(ch, nodeMemoryDesc, n.Memory)
	emitSwap(ch, nodeSwapDesc, n.Swap)
	for _, p := range rc.summary.Pods {
		for _, c := range p.Containers {
			labels := []string{c.Name, p.PodRef.Name, p.PodRef.Namespace}
			if c.StartTime.Unix() > 0 {
				ch <- prometheus.MustNewConstMetric(containerStartDesc, prometheus.GaugeValue,
					float64(c.StartTime.UnixNano())/float64(time.Second), labels...)
			}
			emitCPU(ch, containerCPUDesc, c.CPU, labels...)
			emitMemory(ch, containerMemoryDesc, c.Memory, labels...)
			emitSwap(ch, containerSwapDesc, c.Swap, labels...)
		}
		emitCPU(ch, podCPUDesc, p.CPU, p.PodRef.Name, p.PodRef.Namespace)
		emitMemory(ch, podMemoryDesc, p.Memory, p.PodRef.Name, p.PodRef.Namespace)
		emitSwap(ch, podSwapDesc, p.Swap, p.PodRef.Name, p.PodRef.Namespace)
	}
}

func emitCPU(ch chan<- prometheus.Metric, d *prometheus.Desc, s *statsapi.CPUStats, labels ...string) {
	if s == nil || s.UsageCoreNanoSeconds == nil {
		return
	}
	m := prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(*s.UsageCoreNanoSeconds)/float64(time.Second), labels...)
	ch <- prometheus.NewMetricWithTimestamp(s.Time.Time, m)
}

func emitMemory(ch chan<- prometheus.Metric, d *prometheus.Desc, s *statsapi.MemoryStats, labels ...string) {
	if s == nil || s.WorkingSetBytes == nil {
		return
	}
	m := prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(*s.WorkingSetBytes), labels...)
	ch <- prometheus.NewMetricWithTimestamp(s.Time.Time, m)
}

func emitSwap(ch chan<- prometheus.Metric, d *prometheus.Desc, s *statsapi.SwapStats, labels ...string) {
	if s == nil || s.SwapUsageBytes == nil {
		return
	}
	m := prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(*s.SwapUsageBytes), labels...)
	ch <- prometheus.NewMetricWithTimestamp(s.Time.Time, m)
}
