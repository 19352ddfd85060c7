package main

import (
	"context"

	"github.com/sirupsen/logrus"

	"github.com/vk-cri/vk-cri/cri"
	"github.com/vk-cri/vk-cri/gc"
	"github.com/vk-cri/vk-cri/metrics"
	"github.com/vk-cri/vk-cri/provider"
)

// newGarbageCollection builds the container and image collectors. Image GC needs the image file
// system's size, so it is off without stats (--enable-stats=false); when the policy turns it off
// (--image-gc-high-threshold 100, --image-maximum-gc-age 0) it does not run periodically, but the
// eviction manager still removes unused images under disk pressure, as the kubelet's.
func newGarbageCollection(o *options, rt *cri.Client, p *provider.Provider, measured *measurement, recorder gc.EventRecorder, m *metrics.Recorder, log *logrus.Entry) *gc.Loop {
	loop := &gc.Loop{
		Containers: gc.NewContainerGC(gc.ContainerGCConfig{
			Policy:      o.containerPolicy(),
			Owner:       o.NodeName,
			PodLogRoot:  o.PodLogDir,
			CallTimeout: o.RuntimeRequestTimeout,
		}, rt.Runtime, p, log.WithField("component", "container-gc")),
		Recorder: recorder,
		NodeName: o.NodeName,
		Log:      log.WithField("component", "gc"),
	}
	policy := o.imagePolicy()
	if policy.Disabled() {
		loop.NoPeriodicImageGC = true
		log.Info("periodic image garbage collection off (--image-gc-high-threshold 100, --image-maximum-gc-age 0)")
	}
	if measured == nil {
		log.Warn("--enable-stats=false: no image garbage collection (it needs the image file system's size)")
	} else {
		loop.Images = gc.NewImageGC(gc.ImageGCConfig{
			Policy:      policy,
			NodeName:    o.NodeName,
			CallTimeout: o.RuntimeRequestTimeout,
		}, rt.Images, rt.Runtime, measured.collector, recorder, m, log.WithField("component", "image-gc"))
	}
	if measured != nil {
		measured.evictions.SetReclaimer(reclaimer{loop})
	}
	return loop
}

// reclaimer is the eviction manager's node-level reclaim through the collectors: dead
// containers (of terminated pods too), then unused images.
type reclaimer struct{ loop *gc.Loop }

func (r reclaimer) DeleteAllUnusedContainers(ctx context.Context) error {
	return r.loop.Containers.GarbageCollect(ctx, true)
}

func (r reclaimer) DeleteUnusedImages(ctx context.Context) error {
	if r.loop.Images == nil {
		return nil
	}
	_, err := r.loop.Images.DeleteUnusedImages(ctx)
	return err
}
