package main

import (
	"context"
	"fmt"
	"net/http"

	cadvisorapi "github.com/google/cadvisor/lib/model"
	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"

	"github.com/vk-cri/vk-cri/cm"
	"github.com/vk-cri/vk-cri/cri"
	"github.com/vk-cri/vk-cri/eviction"
	"github.com/vk-cri/vk-cri/provider"
	"github.com/vk-cri/vk-cri/server"
	"github.com/vk-cri/vk-cri/stats"
)

// measurement is the node's embedded cAdvisor and what is built on it.
type measurement struct {
	collector       *stats.Collector
	cadvisorMetrics http.Handler
	evictions       *eviction.Manager
}

// startStats starts cAdvisor and the stats collector, unless --enable-stats=false.
func startStats(o *options, rt *cri.Client, pods func() []*v1.Pod, evictor eviction.Evictor, recorder eviction.Recorder, log *logrus.Entry) (*measurement, error) {
	if !o.EnableStats {
		log.Warn("--enable-stats=false: no /stats/summary, /metrics/resource, /metrics/cadvisor, pressure conditions or eviction")
		return nil, nil
	}
	machine, err := stats.StartCadvisor(stats.CadvisorOptions{HousekeepingInterval: o.HousekeepingInterval})
	if err != nil {
		return nil, fmt.Errorf("starting cAdvisor: %w", err)
	}
	collector, err := stats.NewCollector(stats.Config{
		NodeName:   o.NodeName,
		OwnerLabel: cri.OwnerLabel,
		CgroupRoot: o.CgroupRoot,
		// The driver as the runtime reported it: where the pods' cgroups are.
		CgroupDriver: cm.Driver(o.CgroupDriver),
		RootDir:      o.RootDir,
		PodLogRoot:   o.PodLogDir,
		Pods:         pods,
		CallTimeout:  o.RuntimeRequestTimeout,
	}, machine, rt.Runtime, rt.Images, log.WithField("component", "stats"))
	if err != nil {
		return nil, err
	}
	thresholds, err := o.evictionThresholds()
	if err != nil {
		return nil, err
	}
	declared, err := o.declaredCapacity()
	if err != nil {
		return nil, err
	}
	evictions := eviction.NewManager(eviction.Options{
		Thresholds:               thresholds,
		PressureTransitionPeriod: o.EvictionPressurePeriod,
		MaxPodGracePeriodSeconds: o.EvictionMaxPodGracePeriod,
		Capacity:                 declared,
		Recorder:                 recorder,
		NodeName:                 o.NodeName,
	}, collector, pods, evictor, log.WithField("component", "eviction"))
	return &measurement{collector: collector, cadvisorMetrics: collector.CadvisorMetricsHandler(), evictions: evictions}, nil
}

// admit is the eviction manager's admission of new pods under pressure.
func (m *measurement) admit(pod *v1.Pod, bestEffort bool) (string, string) {
	return eviction.Admit(pod, eviction.PressureList(m.evictions.Pressure()), bestEffort)
}

// routes serves /metrics/cadvisor on the kubelet API (none without stats).
func (m *measurement) routes() []server.Registrar {
	if m == nil {
		return nil
	}
	return []server.Registrar{func(mux server.Mux) { mux.Handle("/metrics/cadvisor", m.cadvisorMetrics) }}
}

// pressure is the eviction manager's pressure conditions, nil without stats.
func (m *measurement) pressure() func() map[v1.NodeConditionType]bool {
	if m == nil {
		return nil
	}
	return m.evictions.Pressure
}

// run starts the eviction manager.
func (m *measurement) run(ctx context.Context) {
	if m != nil {
		go m.evictions.Run(ctx)
	}
}

// lateEvictor lets the eviction manager be built before the provider that evicts.
type lateEvictor struct{ p **provider.Provider }

func (l lateEvictor) EvictPod(pod *v1.Pod, message string, condition v1.PodCondition, grace int64) bool {
	return (*l.p).EvictPod(pod, message, condition, grace)
}

// machineInfo is cAdvisor's description of the machine, nil without stats.
func (m *measurement) machineInfo() *cadvisorapi.MachineInfo {
	if m == nil {
		return nil
	}
	mi, err := m.collector.Machine().MachineInfo()
	if err != nil {
		return nil
	}
	return mi
}
