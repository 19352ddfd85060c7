package provider

import (
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-cri/vk-cri/provider/translate"
)

// sandboxConfigFor composes the pod's DNS configuration and sandbox config. When the sandbox is
// about to be created, it reports what the kubelet reports then: MissingClusterDNS when the pod
// asks for cluster DNS the node lacks, DNSConfigForming when a limit cut the configuration.
func (p *Provider) sandboxConfigFor(pod *v1.Pod, attempt uint32, creating bool) (*runtimeapi.PodSandboxConfig, error) {
	dns, warnings, err := p.dns.ForPodReport(pod)
	if err != nil {
		p.podLog(pod).WithError(err).Warn("pod DNS configuration")
		p.podEvent(pod, v1.EventTypeWarning, "DNSConfigForming", "%v", err)
		dns = nil
	}
	if creating {
		if p.dns.MissingClusterDNS(pod) {
			p.podEvent(pod, v1.EventTypeWarning, "MissingClusterDNS",
				"pod: %q. kubelet does not have ClusterDNS IP configured and cannot create Pod using %q policy. Falling back to %q policy.",
				translate.PodRef(pod), v1.DNSClusterFirst, v1.DNSDefault)
		}
		for _, w := range warnings {
			p.podEvent(pod, v1.EventTypeWarning, "DNSConfigForming", "%s", w)
		}
	}
	userns, err := p.podUsernsOptions(pod)
	if err != nil {
		return nil, err
	}
	return translate.SandboxConfig(translate.SandboxEnv{
		NodeName:      p.cfg.NodeName,
		PodLogRoot:    p.cfg.PodLogRoot,
		CgroupRoot:    p.cfg.CgroupRoot,
		CgroupDriver:  p.cfg.CgroupDriver,
		ClusterDomain: p.cfg.ClusterDomain,
		DNS:           dns,
		Userns:        userns,
	}, pod, attempt)
}
