package main

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/vk-cri/vk-cri/gc"
)

// gcOptions are the kubelet's garbage collection flags, with its names and defaults.
type gcOptions struct {
	ImageGCHighThreshold int
	ImageGCLowThreshold  int
	ImageMinimumGCAge    time.Duration
	ImageMaximumGCAge    time.Duration
	// The kubelet's deprecated container GC flags, kept for the same policy.
	MinimumContainerTTL           time.Duration
	MaxDeadContainersPerContainer int
	MaxDeadContainers             int
}

func defaultGCOptions() gcOptions {
	ip, cp := gc.DefaultImagePolicy(), gc.DefaultContainerPolicy()
	return gcOptions{
		ImageGCHighThreshold:          ip.HighThresholdPercent,
		ImageGCLowThreshold:           ip.LowThresholdPercent,
		ImageMinimumGCAge:             ip.MinAge,
		ImageMaximumGCAge:             ip.MaxAge,
		MinimumContainerTTL:           cp.MinAge,
		MaxDeadContainersPerContainer: cp.MaxPerPodContainer,
		MaxDeadContainers:             cp.MaxContainers,
	}
}

func (o *gcOptions) addFlags(fs *pflag.FlagSet) {
	fs.IntVar(&o.ImageGCHighThreshold, "image-gc-high-threshold", o.ImageGCHighThreshold, "percent of the image file system's usage at or above which image garbage collection runs (100 with --image-maximum-gc-age 0: never)")
	fs.IntVar(&o.ImageGCLowThreshold, "image-gc-low-threshold", o.ImageGCLowThreshold, "percent of the image file system's usage image garbage collection frees down to; less than --image-gc-high-threshold")
	fs.DurationVar(&o.ImageMinimumGCAge, "image-minimum-gc-age", o.ImageMinimumGCAge, "minimum age of an unused image before it is garbage collected")
	fs.DurationVar(&o.ImageMaximumGCAge, "image-maximum-gc-age", o.ImageMaximumGCAge, "an image unused for longer is garbage collected whatever the usage; 0: never")
	fs.DurationVar(&o.MinimumContainerTTL, "minimum-container-ttl-duration", o.MinimumContainerTTL, "minimum age of a dead container before it is garbage collected (the kubelet's deprecated flag)")
	fs.IntVar(&o.MaxDeadContainersPerContainer, "maximum-dead-containers-per-container", o.MaxDeadContainersPerContainer, "dead instances kept of each container of a pod; negative: no limit (the kubelet's deprecated flag)")
	fs.IntVar(&o.MaxDeadContainers, "maximum-dead-containers", o.MaxDeadContainers, "dead containers kept on the node in all; negative: no limit (the kubelet's deprecated flag)")
}

func (o *gcOptions) imagePolicy() gc.ImagePolicy {
	return gc.ImagePolicy{HighThresholdPercent: o.ImageGCHighThreshold, LowThresholdPercent: o.ImageGCLowThreshold,
		MinAge: o.ImageMinimumGCAge, MaxAge: o.ImageMaximumGCAge}
}

func (o *gcOptions) containerPolicy() gc.ContainerPolicy {
	return gc.ContainerPolicy{MinAge: o.MinimumContainerTTL, MaxPerPodContainer: o.MaxDeadContainersPerContainer,
		MaxContainers: o.MaxDeadContainers}
}

func (o *gcOptions) validate() error {
	if err := o.imagePolicy().Validate(); err != nil {
		return err
	}
	if o.MinimumContainerTTL < 0 {
		return fmt.Errorf("--minimum-container-ttl-duration must not be negative")
	}
	return nil
}
