// Package eviction reports the node's pressure conditions and evicts pods when a hard eviction
// threshold is crossed, in the kubelet's order. Deciding (signals, thresholds, ranking) is pure;
// the Manager only reads a summary, decides and asks the provider to evict.
package eviction

import (
	"fmt"
	"strconv"
	"strings"

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
}

func (t Threshold) String() string {
	if t.Quantity != nil {
		return fmt.Sprintf("%s<%s", t.Signal, t.Quantity.String())
	}
	return fmt.Sprintf("%s<%s%%", t.Signal, strconv.FormatFloat(t.Percentage*100, 'f', -1, 64))
}

// value is the threshold's amount for a signal of the given capacity.
func (t Threshold) value(capacity *resource.Quantity) *resource.Quantity {
	if t.Quantity != nil {
		return t.Quantity
	}
	// The kubelet keeps percentages as float32 (evictionapi.ThresholdValue): 10% of a 270 GB
	// disk is then 403 bytes more than a tenth of it, which shows in allocatable.
	return resource.NewQuantity(int64(float64(capacity.Value())*float64(float32(t.Percentage))), resource.BinarySI)
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
