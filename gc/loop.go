package gc

import (
	"context"
	"time"

	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
)

// The kubelet's collection periods (kubelet.go: ContainerGCPeriod, ImageGCPeriod).
const (
	ContainerGCPeriod = time.Minute
	ImageGCPeriod     = 5 * time.Minute
)

// Loop runs the collectors periodically, as the kubelet's StartGarbageCollection: container GC
// every ContainerGCPeriod (ContainerGCFailed on each failure), image GC every ImageGCPeriod
// (ImageGCFailed from the second failure in a row: the first may come before the node's stats
// are ready).
type Loop struct {
	Containers *ContainerGC
	// Images is nil without stats (image GC needs the image file system's size).
	Images *ImageGC
	// NoPeriodicImageGC: the policy turns periodic image GC off (ImagePolicy.Disabled); the
	// eviction manager still reclaims through Images, as the kubelet's.
	NoPeriodicImageGC bool
	Recorder          EventRecorder
	NodeName          string
	// ImagePeriod is ImageGCPeriod unless set (tests).
	ImagePeriod time.Duration
	Clock       clock.WithTicker
	Log         *logrus.Entry
}

// Run collects until ctx ends.
func (l *Loop) Run(ctx context.Context) {
	if l.Clock == nil {
		l.Clock = clock.RealClock{}
	}
	go l.every(ctx, ContainerGCPeriod, l.collectContainers())
	if l.Images == nil || l.NoPeriodicImageGC {
		return
	}
	period := l.ImagePeriod
	if period <= 0 {
		period = ImageGCPeriod
	}
	go l.every(ctx, period, l.collectImages(l.Clock.Now()))
}

func (l *Loop) every(ctx context.Context, period time.Duration, f func(context.Context)) {
	t := l.Clock.NewTicker(period)
	defer t.Stop()
	for {
		f(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
	}
}

func (l *Loop) collectContainers() func(context.Context) {
	failed := false
	return func(ctx context.Context) {
		if err := l.Containers.GarbageCollect(ctx, false); err != nil {
			if ctx.Err() != nil {
				return
			}
			l.Log.WithError(err).Error("container garbage collection failed")
			l.Recorder.Eventf(NodeRef(l.NodeName), v1.EventTypeWarning, EventContainerGCFailed, "%s", err.Error())
			failed = true
			return
		}
		if failed {
			l.Log.Info("container garbage collection succeeded")
			failed = false
		}
	}
}

func (l *Loop) collectImages(began time.Time) func(context.Context) {
	failed := false
	return func(ctx context.Context) {
		if err := l.Images.GarbageCollect(ctx, began); err != nil {
			if ctx.Err() != nil {
				return
			}
			if failed {
				l.Log.WithError(err).Error("image garbage collection failed multiple times in a row")
				l.Recorder.Eventf(NodeRef(l.NodeName), v1.EventTypeWarning, EventImageGCFailed, "%s", err.Error())
			} else {
				l.Log.WithError(err).Warn("image garbage collection failed once; stats may not be ready yet")
			}
			failed = true
			return
		}
		if failed {
			l.Log.Info("image garbage collection succeeded")
			failed = false
		}
	}
}
