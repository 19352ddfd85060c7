package gc

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/clock"
)

// The kubelet's event reasons (pkg/kubelet/events) and image GC metric reasons
// (kubelet_image_garbage_collected_total's "reason" label).
const (
	EventContainerGCFailed   = "ContainerGCFailed"
	EventImageGCFailed       = "ImageGCFailed"
	EventFreeDiskSpaceFailed = "FreeDiskSpaceFailed"
	EventInvalidDiskCapacity = "InvalidDiskCapacity"

	ReasonAge   = "age"
	ReasonSpace = "space"
)

// ImageService is the part of the CRI image service image GC uses.
type ImageService interface {
	ListImages(ctx context.Context, filter *runtimeapi.ImageFilter) ([]*runtimeapi.Image, error)
	RemoveImage(ctx context.Context, image *runtimeapi.ImageSpec) error
}

// ContainerLister lists every container of the runtime, whoever created it: an image is in use
// while any container uses it.
type ContainerLister interface {
	ListContainers(ctx context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error)
}

// ImageFsStats measures the runtime's image file system (the runtime's ImageFsInfo, with the
// file system's capacity and free space).
type ImageFsStats interface {
	ImageFsStats(ctx context.Context) (*statsapi.FsStats, error)
}

// EventRecorder records the node's events.
type EventRecorder interface {
	Eventf(object k8sruntime.Object, eventtype, reason, messageFmt string, args ...any)
}

// Collected counts removed images by reason (kubelet_image_garbage_collected_total).
type Collected interface {
	ImageGarbageCollected(reason string)
}

// ImageGC removes unused images as the kubelet's realImageGCManager. Its records (when an image
// was first seen, last used) live as long as it does.
type ImageGC struct {
	images      ImageService
	containers  ContainerLister
	fs          ImageFsStats
	recorder    EventRecorder
	collected   Collected
	node        *v1.ObjectReference
	policy      ImagePolicy
	callTimeout time.Duration
	clock       clock.PassiveClock
	log         *logrus.Entry

	mu      sync.Mutex
	records imageRecords
}

// ImageGCConfig configures an ImageGC.
type ImageGCConfig struct {
	Policy      ImagePolicy
	NodeName    string
	CallTimeout time.Duration
	Clock       clock.PassiveClock
}

// NewImageGC builds an image collector; the policy must be valid (ImagePolicy.Validate).
func NewImageGC(cfg ImageGCConfig, images ImageService, containers ContainerLister, fs ImageFsStats, recorder EventRecorder, collected Collected, log *logrus.Entry) *ImageGC {
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = 2 * time.Minute
	}
	return &ImageGC{images: images, containers: containers, fs: fs, recorder: recorder, collected: collected,
		node:   NodeRef(cfg.NodeName),
		policy: cfg.Policy, callTimeout: cfg.CallTimeout, clock: cfg.Clock, log: log, records: imageRecords{}}
}

// NodeRef is the reference the kubelet's node events carry (kubelet.go's nodeRef).
func NodeRef(name string) *v1.ObjectReference {
	return &v1.ObjectReference{Kind: "Node", Name: name, UID: types.UID(name)}
}

// Detect lists the runtime's images and notes which are in use now (the kubelet's detectImages,
// which it also runs every 5 minutes between collections).
func (g *ImageGC) Detect(ctx context.Context) error {
	_, err := g.detect(ctx, g.clock.Now())
	return err
}

func (g *ImageGC) detect(ctx context.Context, now time.Time) (map[string]bool, error) {
	cctx, cancel := context.WithTimeout(ctx, g.callTimeout)
	defer cancel()
	images, err := g.images.ListImages(cctx, nil)
	if err != nil {
		return nil, fmt.Errorf("image GC: listing images: %w", err)
	}
	containers, err := g.containers.ListContainers(cctx, nil)
	if err != nil {
		return nil, fmt.Errorf("image GC: listing containers: %w", err)
	}
	inUse := imagesInUse(containers)
	g.mu.Lock()
	g.records.detect(now, images, inUse)
	g.mu.Unlock()
	return inUse, nil
}

// imagesInUse are the image IDs of the containers, running or not (the kubelet's GetPods(all)).
func imagesInUse(containers []*runtimeapi.Container) map[string]bool {
	out := map[string]bool{}
	for _, c := range containers {
		if c.ImageRef != "" {
			out[c.ImageRef] = true
		}
		if img := c.GetImage().GetImage(); img != "" {
			out[img] = true
		}
		if id := c.GetImageId(); id != "" {
			out[id] = true
		}
	}
	return out
}

func (g *ImageGC) evictionOrder(ctx context.Context, freeTime time.Time) ([]candidate, error) {
	inUse, err := g.detect(ctx, freeTime)
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.records.evictionOrder(inUse), nil
}

// GarbageCollect runs one collection (the kubelet's GarbageCollect): images too old go, then,
// when the image file system is at or above the high threshold, unused images until it is
// down to the low one. began is when the collector started; not freeing enough records
// FreeDiskSpaceFailed and fails.
func (g *ImageGC) GarbageCollect(ctx context.Context, began time.Time) error {
	freeTime := g.clock.Now()
	images, err := g.evictionOrder(ctx, freeTime)
	if err != nil {
		return err
	}
	old, images := tooOld(freeTime, began, g.policy.MaxAge, images)
	var ageErrs []error
	for _, img := range old {
		if err := g.remove(ctx, img, ReasonAge); err != nil {
			ageErrs = append(ageErrs, err)
			images = append(images, img)
		}
	}
	if len(ageErrs) > 0 {
		return fmt.Errorf("wanted to free images older than %v, encountered errors in image deletion: %w", g.policy.MaxAge, errors.Join(ageErrs...))
	}

	fctx, cancel := context.WithTimeout(ctx, g.callTimeout)
	fs, err := g.fs.ImageFsStats(fctx)
	cancel()
	if err != nil {
		return fmt.Errorf("image GC: measuring the image file system: %w", err)
	}
	var capacity, available int64
	if fs != nil && fs.CapacityBytes != nil {
		capacity = int64(*fs.CapacityBytes)
	}
	if fs != nil && fs.AvailableBytes != nil {
		available = int64(*fs.AvailableBytes)
	}
	if capacity == 0 {
		err := errors.New("invalid capacity 0 on image filesystem")
		g.recorder.Eventf(g.node, v1.EventTypeWarning, EventInvalidDiskCapacity, "%s", err.Error())
		return err
	}
	usage, toFree := spaceToFree(capacity, available, g.policy)
	if usage < g.policy.HighThresholdPercent {
		return nil
	}
	g.log.WithFields(logrus.Fields{"usage": usage, "highThreshold": g.policy.HighThresholdPercent,
		"lowThreshold": g.policy.LowThresholdPercent, "amountToFree": toFree}).
		Info("image GC: disk usage on the image file system is over the high threshold, freeing down to the low threshold")
	freed, err := g.freeSpace(ctx, toFree, freeTime, images)
	if err != nil {
		return err
	}
	if freed < toFree {
		msg := fmt.Sprintf("Insufficient free disk space on the node's image filesystem (%d%% of %s used). "+
			"Failed to free sufficient space by deleting unused images (freed %d bytes). "+
			"Investigate disk usage, as it could be used by active images, logs, volumes, or other data.",
			usage, formatSize(capacity), freed)
		g.recorder.Eventf(g.node, v1.EventTypeWarning, EventFreeDiskSpaceFailed, "%s", msg)
		return errors.New(msg)
	}
	return nil
}

// DeleteUnusedImages removes every image that may go, whatever the usage (the eviction
// manager's reclaim, the kubelet's DeleteUnusedImages).
func (g *ImageGC) DeleteUnusedImages(ctx context.Context) (int64, error) {
	freeTime := g.clock.Now()
	images, err := g.evictionOrder(ctx, freeTime)
	if err != nil {
		return 0, err
	}
	return g.freeSpace(ctx, math.MaxInt64, freeTime, images)
}

// freeSpace removes eligible images in order until bytes are freed; it returns what it freed.
func (g *ImageGC) freeSpace(ctx context.Context, bytes int64, freeTime time.Time, images []candidate) (int64, error) {
	var freed int64
	var errs []error
	for _, img := range eligibleForSpace(freeTime, g.policy.MinAge, images) {
		if err := g.remove(ctx, img, ReasonSpace); err != nil {
			errs = append(errs, err)
			continue
		}
		freed += img.size
		if freed >= bytes {
			break
		}
	}
	if len(errs) > 0 {
		return freed, fmt.Errorf("wanted to free %d bytes, but freed %d bytes space with errors in image deletion: %w", bytes, freed, errors.Join(errs...))
	}
	return freed, nil
}

func (g *ImageGC) remove(ctx context.Context, img candidate, reason string) error {
	cctx, cancel := context.WithTimeout(ctx, g.callTimeout)
	defer cancel()
	g.log.WithFields(logrus.Fields{"imageID": img.id, "size": img.size, "reason": reason}).Info("image GC: removing image")
	if err := g.images.RemoveImage(cctx, &runtimeapi.ImageSpec{Image: img.id}); err != nil {
		return fmt.Errorf("removing image %s: %w", img.id, err)
	}
	g.mu.Lock()
	delete(g.records, img.id)
	g.mu.Unlock()
	g.collected.ImageGarbageCollected(reason)
	return nil
}
