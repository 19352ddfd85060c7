package provider

import (
	"context"

	dto "github.com/prometheus/client_model/go"
	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/vk-cri/vk-cri/stats"
)

// SummarySource measures the node (package stats).
type SummarySource interface {
	Summary(ctx context.Context) (*statsapi.Summary, error)
}

// GetStatsSummary serves /stats/summary.
func (p *Provider) GetStatsSummary(ctx context.Context) (*statsapi.Summary, error) {
	if p.cfg.Stats == nil {
		return nil, errdefs.InvalidInput("stats are disabled on this node (--enable-stats=false)")
	}
	return p.cfg.Stats.Summary(ctx)
}

// GetMetricsResource serves /metrics/resource. Like the kubelet, a failed measurement is an
// answer with resource_scrape_error 1, not an HTTP error.
func (p *Provider) GetMetricsResource(ctx context.Context) ([]*dto.MetricFamily, error) {
	if p.cfg.Stats == nil {
		return nil, errdefs.InvalidInput("stats are disabled on this node (--enable-stats=false)")
	}
	s, err := p.cfg.Stats.Summary(ctx)
	if err != nil {
		p.log.WithError(err).Warn("measuring the node for /metrics/resource")
		s = nil
	}
	return stats.ResourceMetrics(s)
}
