// Package eviction reports the node's pressure conditions and evicts pods when a hard eviction
// threshold is crossed, in the kubelet's order. Deciding (signals, thresholds, ranking) is pure;
// the Manager only reads a summary, decides and asks the provider to evict.
package eviction

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Signal is an eviction signal, named as in the kubelet's flags.
type Signal string

// The signals vk-cri observes.
const (
	MemoryAvailable   Signal = "memory.available"
	NodeFsAvailable   Signal = "nodefs.available"
	NodeFsInodesFree  Signal = "nodefs.inodesFree"
	ImageFsAvailable  Signal = "imagefs.available"
	ImageFsInodesFree Signal = "imagefs.inodesFree"
	PIDAvailable      Signal = "pid.available"
)

// DefaultHard is the kubelet's default --eviction-hard on Linux.
const DefaultHard = "memory.available<100Mi,nodefs.available<10%,nodefs.inodesFree<5%,imagefs.available<15%"

// Threshold is crossed when the signal's available amount is less than Quantity, or than
// Percentage of the signal's capacity.
type Threshold struct {
	Signal     Signal
	Quantity   *resource.Quantity
	Percentage float64 // 0..1
	// GracePeriod is how long a soft threshold must stay crossed before pods are evicted for
	// it; 0 for a hard threshold.
	GracePeriod time.Duration
	// MinReclaim, when set, is how much beyond the threshold must be available again before
	// the pressure it caused ends (--eviction-minimum-reclaim).
	MinReclaim *Amount
}

// Amount is a quantity, or a percentage (0..1) of a signal's capacity.
type Amount struct {
	Quantity   *resource.Quantity
	Percentage float64
}

// value is the amount for a signal of the given capacity, as the kubelet computes it.
func (a Amount) value(capacity *resource.Quantity) *resource.Quantity {
	if a.Quantity != nil {
		return a.Quantity
	}
	// The kubelet keeps percentages as float32 (evictionapi.ThresholdValue): 10% of a 270 GB
	// disk is then 403 bytes more than a tenth of it, which shows in allocatable.
	return resource.NewQuantity(int64(float64(capacity.Value())*float64(float32(a.Percentage))), resource.BinarySI)
}

// Hard reports whether the threshold evicts at once (the kubelet's isHardEvictionThreshold).
func (t Threshold) Hard() bool { return t.GracePeriod == 0 }

// key identifies a threshold across rounds (the kubelet keys its maps by the whole threshold).
func (t Threshold) key() string { return t.String() + "/" + t.GracePeriod.String() }

func (t Threshold) String() string {
	if t.Quantity != nil {
		return fmt.Sprintf("%s<%s", t.Signal, t.Quantity.String())
	}
	return fmt.Sprintf("%s<%s%%", t.Signal, strconv.FormatFloat(t.Percentage*100, 'f', -1, 64))
}

// value is the threshold's amount for a signal of the given capacity.
func (t Threshold) value(capacity *resource.Quantity) *resource.Quantity {
	return Amount{Quantity: t.Quantity, Percentage: t.Percentage}.value(capacity)
}

var knownSignals = map[Signal]bool{MemoryAvailable: true, NodeFsAvailable: true, NodeFsInodesFree: true,
	ImageFsAvailable: true, ImageFsInodesFree: true, PIDAvailable: true}

// ParseThresholds reads thresholds in the kubelet's syntax: "signal<quantity" or
// "signal<percent%", comma-separated. An empty spec gives the kubelet's defaults; a threshold
// of 0 or 0% is left out (the kubelet's way to disable one).
func ParseThresholds(spec string) ([]Threshold, error) {
	if strings.TrimSpace(spec) == "" {
		spec = DefaultHard
	}
	return parseThresholdList(spec)
}

// parseThresholdList reads thresholds in the kubelet's syntax; an empty spec gives none.
func parseThresholdList(spec string) ([]Threshold, error) {
	var out []Threshold
	seen := map[Signal]bool{}
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, value, ok := strings.Cut(item, "<")
		if !ok {
			return nil, fmt.Errorf("eviction threshold %q: want signal<value", item)
		}
		sig := Signal(strings.TrimSpace(name))
		if !knownSignals[sig] {
			return nil, fmt.Errorf("eviction threshold %q: unknown signal %q", item, sig)
		}
		if seen[sig] {
			return nil, fmt.Errorf("eviction threshold %q: signal %s given twice", item, sig)
		}
		seen[sig] = true
		value = strings.TrimSpace(value)
		t := Threshold{Signal: sig}
		if pct, isPct := strings.CutSuffix(value, "%"); isPct {
			f, err := strconv.ParseFloat(pct, 64)
			if err != nil || f < 0 || f > 100 {
				return nil, fmt.Errorf("eviction threshold %q: percentage must be between 0%% and 100%%", item)
			}
			if f == 0 {
				continue
			}
			t.Percentage = f / 100
		} else {
			q, err := resource.ParseQuantity(value)
			if err != nil {
				return nil, fmt.Errorf("eviction threshold %q: %w", item, err)
			}
			if q.Sign() < 0 {
				return nil, fmt.Errorf("eviction threshold %q: must not be negative", item)
			}
			if q.IsZero() {
				continue
			}
			t.Quantity = &q
		}
		out = append(out, t)
	}
	return out, nil
}

// conditionOf is the node condition a signal's pressure sets.
func conditionOf(s Signal) v1.NodeConditionType {
	switch s {
	case MemoryAvailable:
		return v1.NodeMemoryPressure
	case PIDAvailable:
		return v1.NodePIDPressure
	default:
		return v1.NodeDiskPressure
	}
}

// resourceOf is the resource a signal's pressure is about, as named in eviction messages.
func resourceOf(s Signal) v1.ResourceName {
	switch s {
	case MemoryAvailable:
		return v1.ResourceMemory
	case NodeFsAvailable, ImageFsAvailable:
		return v1.ResourceEphemeralStorage
	case NodeFsInodesFree, ImageFsInodesFree:
		return "inodes"
	default:
		return "pids"
	}
}
