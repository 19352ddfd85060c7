package main

import (
	"fmt"
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/vk-cri/vk-cri/eviction"
	"github.com/vk-cri/vk-cri/provider"
)

// resourcePIDs is the "pid" resource --kube-reserved and --system-reserved accept: the kubelet
// keeps it from the node-level pids limit, which is not part of the node's allocatable.
const resourcePIDs v1.ResourceName = "pid"

// parseReserved reads --kube-reserved or --system-reserved as the kubelet does
// (cmd/kubelet/app/server.go parseResourceList): cpu, memory, ephemeral-storage and pid
// quantities, none negative, cpu rounded to the millicore.
func parseReserved(flag string, m map[string]string) (v1.ResourceList, error) {
	if len(m) == 0 {
		return nil, nil
	}
	out := v1.ResourceList{}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		name := v1.ResourceName(k)
		switch name {
		case v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage, resourcePIDs:
		default:
			return nil, fmt.Errorf("--%s: cannot reserve %q resource", flag, k)
		}
		q, err := resource.ParseQuantity(m[k])
		if err != nil {
			return nil, fmt.Errorf("--%s: failed to parse quantity %q for %q resource: %w", flag, m[k], k, err)
		}
		if q.Sign() < 0 {
			return nil, fmt.Errorf("--%s: resource quantity for %q cannot be negative: %v", flag, k, m[k])
		}
		if name == v1.ResourceCPU {
			q.SetMilli((q.ScaledValue(resource.Micro) + 500) / 1000)
		}
		out[name] = q
	}
	return out, nil
}

// nodeReservation is what the node's allocatable keeps from pods: --kube-reserved,
// --system-reserved and the --eviction-hard thresholds on memory and nodefs (also with
// --enable-stats=false, as the kubelet reserves them whether or not it evicts).
func (o *options) nodeReservation() (provider.NodeReservation, error) {
	kube, err := parseReserved("kube-reserved", o.KubeReserved)
	if err != nil {
		return provider.NodeReservation{}, err
	}
	system, err := parseReserved("system-reserved", o.SystemReserved)
	if err != nil {
		return provider.NodeReservation{}, err
	}
	thresholds, err := eviction.ParseThresholds(o.EvictionHard)
	if err != nil {
		return provider.NodeReservation{}, fmt.Errorf("--eviction-hard: %w", err)
	}
	return provider.NodeReservation{
		KubeReserved:   kube,
		SystemReserved: system,
		HardEviction:   func(capacity v1.ResourceList) v1.ResourceList { return eviction.Reservation(thresholds, capacity) },
	}, nil
}
