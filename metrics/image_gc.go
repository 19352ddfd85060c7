package metrics

import "github.com/prometheus/client_golang/prometheus"

// newImageGCCounter is kubelet_image_garbage_collected_total, with the kubelet's help text and
// its one label, reason ("age" or "space"; pkg/kubelet/metrics).
func newImageGCCounter(m metricsIn) *prometheus.CounterVec {
	return m.counterVec("kubelet_image_garbage_collected_total",
		"Total number of images garbage collected by the kubelet, whether through disk usage or image age.", "reason")
}

// ImageGarbageCollected counts an image removed by image GC, for reason "age" or "space".
func (r *Recorder) ImageGarbageCollected(reason string) {
	if r == nil {
		return
	}
	r.imageGC.WithLabelValues(reason).Inc()
}
