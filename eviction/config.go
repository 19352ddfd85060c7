package eviction

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Flags are the kubelet's eviction flags, as given.
type Flags struct {
	// Hard is --eviction-hard ("" for the kubelet's defaults).
	Hard string
	// Soft is --eviction-soft ("" for none).
	Soft string
	// SoftGracePeriod is --eviction-soft-grace-period, signal → duration.
	SoftGracePeriod map[string]string
	// MinimumReclaim is --eviction-minimum-reclaim, signal → quantity or percentage.
	MinimumReclaim map[string]string
}

// ParseFlags builds the thresholds from the kubelet's eviction flags (its ParseThresholdConfig):
// hard thresholds, then soft ones each with its grace period (required), then each threshold's
// minimum reclaim.
func ParseFlags(f Flags) ([]Threshold, error) {
	hard, err := ParseThresholds(f.Hard)
	if err != nil {
		return nil, fmt.Errorf("--eviction-hard: %w", err)
	}
	soft, err := parseThresholdList(f.Soft)
	if err != nil {
		return nil, fmt.Errorf("--eviction-soft: %w", err)
	}
	grace, err := parseGracePeriods(f.SoftGracePeriod)
	if err != nil {
		return nil, fmt.Errorf("--eviction-soft-grace-period: %w", err)
	}
	reclaim, err := parseMinimumReclaims(f.MinimumReclaim)
	if err != nil {
		return nil, fmt.Errorf("--eviction-minimum-reclaim: %w", err)
	}
	for i := range soft {
		g, ok := grace[soft[i].Signal]
		if !ok || g == 0 {
			return nil, fmt.Errorf("grace period must be specified for the soft eviction threshold %v", soft[i].Signal)
		}
		soft[i].GracePeriod = g
	}
	out := append(hard, soft...)
	for i := range out {
		if r, ok := reclaim[out[i].Signal]; ok {
			r := r
			out[i].MinReclaim = &r
		}
	}
	return out, nil
}

func parseSignal(name string) (Signal, error) {
	s := Signal(strings.TrimSpace(name))
	if !knownSignals[s] {
		return "", fmt.Errorf("unsupported eviction signal %v", s)
	}
	return s, nil
}

func parseGracePeriods(m map[string]string) (map[Signal]time.Duration, error) {
	out := map[Signal]time.Duration{}
	for _, name := range sortedKeys(m) {
		s, err := parseSignal(name)
		if err != nil {
			return nil, err
		}
		d, err := time.ParseDuration(strings.TrimSpace(m[name]))
		if err != nil {
			return nil, err
		}
		if d < 0 {
			return nil, fmt.Errorf("invalid eviction grace period specified: %v, must be a positive value", m[name])
		}
		out[s] = d
	}
	return out, nil
}

func parseMinimumReclaims(m map[string]string) (map[Signal]Amount, error) {
	out := map[Signal]Amount{}
	for _, name := range sortedKeys(m) {
		s, err := parseSignal(name)
		if err != nil {
			return nil, err
		}
		v := strings.TrimSpace(m[name])
		if pct, ok := strings.CutSuffix(v, "%"); ok {
			f, err := strconv.ParseFloat(pct, 64)
			if err != nil || f <= 0 || f > 100 {
				return nil, fmt.Errorf("eviction percentage minimum reclaim %v must be positive: %s", s, v)
			}
			out[s] = Amount{Percentage: f / 100}
			continue
		}
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return nil, err
		}
		if q.Sign() < 0 {
			return nil, fmt.Errorf("negative eviction minimum reclaim specified for %v", s)
		}
		out[s] = Amount{Quantity: &q}
	}
	return out, nil
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
