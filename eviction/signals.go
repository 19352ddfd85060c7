package eviction

import (
	"k8s.io/apimachinery/pkg/api/resource"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// observation is how much of a signal's resource is available, out of what capacity.
type observation struct {
	available *resource.Quantity
	capacity  *resource.Quantity
}

// observe reads the signals from a summary, as the kubelet derives them.
func observe(s *statsapi.Summary) map[Signal]observation {
	obs := map[Signal]observation{}
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
