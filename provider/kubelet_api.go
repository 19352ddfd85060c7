package provider

import (
	"context"
	"io"

	dto "github.com/prometheus/client_model/go"
	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	"github.com/virtual-kubelet/virtual-kubelet/node/api"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// The streaming and stats parts of the kubelet API come with their own issues; until then they
// answer with a clear error instead of pretending.

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

// GetStatsSummary is not available yet: stats come from cAdvisor in a later version.
func (p *Provider) GetStatsSummary(context.Context) (*statsv1alpha1.Summary, error) {
	return nil, errdefs.InvalidInput("stats are not supported by this version of vk-cri")
}

// GetMetricsResource is not available yet: stats come from cAdvisor in a later version.
func (p *Provider) GetMetricsResource(context.Context) ([]*dto.MetricFamily, error) {
	return nil, errdefs.InvalidInput("resource metrics are not supported by this version of vk-cri")
}
