package stats

import (
	"context"
	"net/http"
	"time"

	"github.com/google/cadvisor/lib/metrics"
	cadvisorapi "github.com/google/cadvisor/lib/model"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	kubetypes "k8s.io/kubelet/pkg/types"
	"k8s.io/utils/clock"
)

// CadvisorMetricsHandler serves /metrics/cadvisor: cAdvisor's own Prometheus collector over the
// root cgroup and this node's pod and container cgroups, labelled as the kubelet labels them.
func (c *Collector) CadvisorMetricsHandler() http.Handler {
	reg := prometheus.NewRegistry()
	info := cadvisorInfo{c: c}
	reg.MustRegister(
		metrics.NewPrometheusCollector(info, kubeletContainerLabels, includedMetrics, clock.RealClock{},
			cadvisorapi.RequestOptions{IdType: cadvisorapi.TypeName, Count: 1, Recursive: true}),
		metrics.NewPrometheusMachineCollector(info, includedMetrics),
	)
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// cadvisorInfo answers cAdvisor's collector from a fresh snapshot instead of cAdvisor's own
// container tracking (which vk-cri leaves off, see the package comment).
type cadvisorInfo struct {
	c *Collector
}

func (i cadvisorInfo) GetVersionInfo() (*cadvisorapi.VersionInfo, error) {
	return i.c.machine.VersionInfo()
}

func (i cadvisorInfo) GetMachineInfo() (*cadvisorapi.MachineInfo, error) {
	return i.c.machine.MachineInfo()
}

func (i cadvisorInfo) GetRequestedContainersInfo(string, cadvisorapi.RequestOptions) (map[string]*cadvisorapi.ContainerInfo, error) {
	ctx, cancel := context.WithTimeout(context.Background(), i.c.cfg.CallTimeout)
	defer cancel()
	snap, err := i.c.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	return containerInfos(snap), nil
}

// containerInfos describes the snapshot's cgroups the way cAdvisor's collector expects them.
func containerInfos(s *snapshot) map[string]*cadvisorapi.ContainerInfo {
	out := map[string]*cadvisorapi.ContainerInfo{}
	if s.Root != nil {
		if latest := latestSample(s.Root); latest != nil {
			root := *s.Root
			root.Stats = []*cadvisorapi.ContainerStats{latest}
			out["/"] = &root
		}
	}
	for _, p := range s.Pods {
		md := p.Sandbox.GetMetadata()
		podLabels := map[string]string{
			kubetypes.KubernetesPodNameLabel:      md.GetName(),
			kubetypes.KubernetesPodNamespaceLabel: md.GetNamespace(),
			kubetypes.KubernetesPodUIDLabel:       md.GetUid(),
		}
		if p.Cgroup != nil {
			out[p.Cgroup.Name] = cgroupInfo(p.Cgroup, podLabels, "", time.Unix(0, p.Sandbox.CreatedAt))
		}
		for _, ct := range p.Containers {
			if ct.Cgroup == nil {
				continue
			}
			out[ct.Cgroup.Name] = cgroupInfo(ct.Cgroup, ct.Container.Labels, ct.Container.GetImage().GetImage(), time.Unix(0, ct.Container.CreatedAt))
		}
	}
	return out
}

func cgroupInfo(cg *cgroupSample, labels map[string]string, image string, created time.Time) *cadvisorapi.ContainerInfo {
	st := cg.Stats
	return &cadvisorapi.ContainerInfo{
		ContainerReference: cadvisorapi.ContainerReference{Name: cg.Name},
		Spec: cadvisorapi.ContainerSpec{
			CreationTime: created,
			Labels:       labels,
			Image:        image,
			HasCpu:       true,
			HasMemory:    true,
			HasNetwork:   st.Network != nil,
			HasProcesses: true,
			Memory:       cadvisorapi.MemorySpec{Limit: cg.MemoryLimit},
		},
		Stats: []*cadvisorapi.ContainerStats{st},
	}
}

// kubeletContainerLabels are the labels the kubelet puts on /metrics/cadvisor series.
func kubeletContainerLabels(ci *cadvisorapi.ContainerInfo) map[string]string {
	l := ci.Spec.Labels
	return map[string]string{
		"id":        ci.Name,
		"name":      nameOf(ci),
		"image":     ci.Spec.Image,
		"container": l[kubetypes.KubernetesContainerNameLabel],
		"pod":       l[kubetypes.KubernetesPodNameLabel],
		"namespace": l[kubetypes.KubernetesPodNamespaceLabel],
	}
}

// nameOf is the container's runtime ID for container cgroups (the last path element), empty for
// pods and the root.
func nameOf(ci *cadvisorapi.ContainerInfo) string {
	if ci.Spec.Labels[kubetypes.KubernetesContainerNameLabel] == "" {
		return ""
	}
	for i := len(ci.Name) - 1; i >= 0; i-- {
		if ci.Name[i] == '/' {
			return ci.Name[i+1:]
		}
	}
	return ci.Name
}
