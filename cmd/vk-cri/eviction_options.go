package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/vk-cri/vk-cri/eviction"
)

// evictionOptions are the kubelet's soft eviction flags, with its names and defaults
// (--eviction-hard and the pressure transition period are in options.go).
type evictionOptions struct {
	EvictionSoft              string
	EvictionSoftGracePeriod   map[string]string
	EvictionMinimumReclaim    map[string]string
	EvictionMaxPodGracePeriod int64
}

func (o *evictionOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.EvictionSoft, "eviction-soft", o.EvictionSoft, "soft eviction thresholds in the kubelet's syntax, e.g. 'memory.available<1.5Gi'; each needs a grace period")
	fs.StringToStringVar(&o.EvictionSoftGracePeriod, "eviction-soft-grace-period", o.EvictionSoftGracePeriod, "how long each soft threshold must stay met before a pod is evicted, e.g. 'memory.available=1m30s'")
	fs.StringToStringVar(&o.EvictionMinimumReclaim, "eviction-minimum-reclaim", o.EvictionMinimumReclaim, "how much beyond its threshold must be available again before a signal's pressure ends, e.g. 'memory.available=0Mi,nodefs.available=500Mi'")
	fs.Int64Var(&o.EvictionMaxPodGracePeriod, "eviction-max-pod-grace-period", o.EvictionMaxPodGracePeriod, "longest grace period, in seconds, of a pod evicted for a soft threshold (the kubelet's 0 gives the 1 s minimum)")
}

// thresholds are the hard and soft thresholds the flags describe.
func (o *options) evictionThresholds() ([]eviction.Threshold, error) {
	th, err := eviction.ParseFlags(eviction.Flags{Hard: o.EvictionHard, Soft: o.EvictionSoft,
		SoftGracePeriod: o.EvictionSoftGracePeriod, MinimumReclaim: o.EvictionMinimumReclaim})
	if err != nil {
		return nil, err
	}
	if o.EvictionMaxPodGracePeriod < 0 {
		return nil, fmt.Errorf("--eviction-max-pod-grace-period must not be negative")
	}
	return th, nil
}
