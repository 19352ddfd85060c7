package eviction

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// observation is how much of a signal's resource is available, out of what capacity.
type observation struct {
	available *resource.Quantity
	capacity  *resource.Quantity
}

// observe reads the signals from a summary, as the kubelet derives them, and for a node with a
// declared capacity (declaredCapacity) its memory and nodefs signals against that capacity.
func observe(s *statsapi.Summary, declared v1.ResourceList) map[Signal]observation {
	obs := map[Signal]observation{}
	defer declaredCapacity(obs, s, declared)
	n := s.Node
	if m := n.Memory; m != nil && m.AvailableBytes != nil && m.WorkingSetBytes != nil {
		obs[MemoryAvailable] = observation{
			available: bytes(*m.AvailableBytes),
			capacity:  bytes(*m.AvailableBytes + *m.WorkingSetBytes),
		}
	}
	observeFs(obs, n.Fs, NodeFsAvailable, NodeFsInodesFree)
	if n.Runtime != nil {
		observeFs(obs, n.Runtime.ImageFs, ImageFsAvailable, ImageFsInodesFree)
	}
	if r := n.Rlimit; r != nil && r.MaxPID != nil && r.NumOfRunningProcesses != nil {
		obs[PIDAvailable] = observation{
			available: resource.NewQuantity(*r.MaxPID-*r.NumOfRunningProcesses, resource.DecimalSI),
			capacity:  resource.NewQuantity(*r.MaxPID, resource.DecimalSI),
		}
	}
	return obs
}

func observeFs(obs map[Signal]observation, fs *statsapi.FsStats, bytesSig, inodesSig Signal) {
	if fs == nil {
		return
	}
	if fs.AvailableBytes != nil && fs.CapacityBytes != nil {
		obs[bytesSig] = observation{available: bytes(*fs.AvailableBytes), capacity: bytes(*fs.CapacityBytes)}
	}
	if fs.InodesFree != nil && fs.Inodes != nil {
		obs[inodesSig] = observation{
			available: resource.NewQuantity(int64(*fs.InodesFree), resource.DecimalSI),
			capacity:  resource.NewQuantity(int64(*fs.Inodes), resource.DecimalSI),
		}
	}
}

func bytes(v uint64) *resource.Quantity { return resource.NewQuantity(int64(v), resource.BinarySI) }

// crossed returns the thresholds whose signal is below them; with enforceMinReclaim, below
// them plus their minimum reclaim (a threshold met before stays met until that much is back:
// the kubelet's thresholdsMet).
func crossed(thresholds []Threshold, obs map[Signal]observation, enforceMinReclaim bool) []Threshold {
	var out []Threshold
	for _, t := range thresholds {
		o, ok := obs[t.Signal]
		if !ok {
			continue
		}
		q := t.value(o.capacity).DeepCopy()
		if enforceMinReclaim && t.MinReclaim != nil {
			q.Add(*t.MinReclaim.value(o.capacity))
		}
		if o.available.Cmp(q) < 0 {
			out = append(out, t)
		}
	}
	return out
}

// declaredCapacity replaces the memory.available and nodefs.available observations of a node
// whose declared capacity is less than the host's (--capacity): what is available is that
// capacity less what the node's pods use (their working sets; their ephemeral storage), so that
// the node is under pressure when its pods fill its share, whatever the host has left.
func declaredCapacity(obs map[Signal]observation, s *statsapi.Summary, declared v1.ResourceList) {
	if q, ok := declared[v1.ResourceMemory]; ok {
		var used int64
		for i := range s.Pods {
			if m := s.Pods[i].Memory; m != nil && m.WorkingSetBytes != nil {
				used += int64(*m.WorkingSetBytes)
			}
		}
		obs[MemoryAvailable] = observation{available: resource.NewQuantity(max(q.Value()-used, 0), resource.BinarySI), capacity: ptrTo(q.DeepCopy())}
	}
	if q, ok := declared[v1.ResourceEphemeralStorage]; ok {
		var used int64
		for i := range s.Pods {
			if e := s.Pods[i].EphemeralStorage; e != nil && e.UsedBytes != nil {
				used += int64(*e.UsedBytes)
			}
		}
		obs[NodeFsAvailable] = observation{available: resource.NewQuantity(max(q.Value()-used, 0), resource.BinarySI), capacity: ptrTo(q.DeepCopy())}
	}
}

func ptrTo(q resource.Quantity) *resource.Quantity { return &q }
