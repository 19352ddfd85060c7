package provider

import (
	"context"
	"io"

	dto "github.com/prometheus/client_model/go"
	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	"github.com/virtual-kubelet/virtual-kubelet/node/api"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/vk-cri/vk-cri/stats"
)

// The streaming parts of the kubelet API come with their own issue; until then they answer with
// a clear error instead of pretending.

// RunInContainer is not available yet: exec needs the CRI streaming proxy.
func (p *Provider) RunInContainer(context.Context, string, string, string, []string, api.AttachIO) error {
	return errdefs.InvalidInput("exec is not supported by this version of vk-cri")
}

// AttachToContainer is not available yet: attach needs the CRI streaming proxy.
func (p *Provider) AttachToContainer(context.Context, string, string, string, api.AttachIO) error {
	return errdefs.InvalidInput("attach is not supported by this version of vk-cri")
}

// PortForward is not available yet: it needs the CRI streaming proxy.
func (p *Provider) PortForward(context.Context, string, string, int32, io.ReadWriteCloser) error {
	return errdefs.InvalidInput("port-forward is not supported by this version of vk-cri")
}

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
