package gc

import (
	"errors"
	"fmt"
	"sort"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// ImagePolicy is the kubelet's image GC policy (images.ImageGCPolicy).
type ImagePolicy struct {
	// HighThresholdPercent is the image file system usage, in percent, at or above which image
	// GC runs (--image-gc-high-threshold).
	HighThresholdPercent int
	// LowThresholdPercent is the usage image GC frees down to (--image-gc-low-threshold).
	LowThresholdPercent int
	// MinAge is how long an image stays after it was first seen, unused (--image-minimum-gc-age).
	MinAge time.Duration
	// MaxAge removes an image unused for longer, whatever the usage; 0 for never
	// (--image-maximum-gc-age).
	MaxAge time.Duration
}

// The kubelet's defaults (pkg/kubelet/apis/config/v1beta1/defaults.go).
const (
	DefaultImageGCHighThresholdPercent = 85
	DefaultImageGCLowThresholdPercent  = 80
	DefaultImageMinimumGCAge           = 2 * time.Minute
)

// DefaultImagePolicy is the kubelet's default image GC policy.
func DefaultImagePolicy() ImagePolicy {
	return ImagePolicy{HighThresholdPercent: DefaultImageGCHighThresholdPercent,
		LowThresholdPercent: DefaultImageGCLowThresholdPercent, MinAge: DefaultImageMinimumGCAge}
}

// Validate gives the kubelet's configuration errors (apis/config/validation) for a policy it
// refuses.
func (p ImagePolicy) Validate() error {
	var errs []error
	if p.HighThresholdPercent < 0 || p.HighThresholdPercent > 100 {
		errs = append(errs, fmt.Errorf("invalid configuration: imageGCHighThresholdPercent (--image-gc-high-threshold) %v must be between 0 and 100, inclusive", p.HighThresholdPercent))
	}
	if p.LowThresholdPercent < 0 || p.LowThresholdPercent > 100 {
		errs = append(errs, fmt.Errorf("invalid configuration: imageGCLowThresholdPercent (--image-gc-low-threshold) %v must be between 0 and 100, inclusive", p.LowThresholdPercent))
	}
	if p.LowThresholdPercent >= p.HighThresholdPercent {
		errs = append(errs, fmt.Errorf("invalid configuration: imageGCLowThresholdPercent (--image-gc-low-threshold) %v must be less than imageGCHighThresholdPercent (--image-gc-high-threshold) %v", p.LowThresholdPercent, p.HighThresholdPercent))
	}
	if p.MinAge < 0 {
		errs = append(errs, fmt.Errorf("invalid configuration: imageMinimumGCAge %v must not be negative", p.MinAge))
	}
	if p.MaxAge < 0 {
		errs = append(errs, fmt.Errorf("invalid configuration: imageMaximumGCAge %v must not be negative", p.MaxAge))
	}
	if p.MaxAge > 0 && p.MaxAge <= p.MinAge {
		errs = append(errs, fmt.Errorf("invalid configuration: imageMaximumGCAge %v must be greater than imageMinimumGCAge %v", p.MaxAge, p.MinAge))
	}
	return errors.Join(errs...)
}

// Disabled reports the kubelet's way to turn image GC off: a high threshold of 100 and no
// maximum age (StartGarbageCollection).
func (p ImagePolicy) Disabled() bool { return p.HighThresholdPercent == 100 && p.MaxAge == 0 }

// imageRecord is what the collector remembers of an image between passes.
type imageRecord struct {
	firstDetected time.Time
	lastUsed      time.Time
	size          int64
	pinned        bool
}

// imageRecords are the records of the images the runtime has, by image ID.
type imageRecords map[string]*imageRecord

// detect brings the records up to date with the runtime's images at now (the kubelet's
// detectImages): a new image is first detected now, an image in use was last used now, records
// of images gone are dropped.
func (r imageRecords) detect(now time.Time, images []*runtimeapi.Image, inUse map[string]bool) {
	current := map[string]bool{}
	for _, img := range images {
		current[img.Id] = true
		rec, ok := r[img.Id]
		if !ok {
			rec = &imageRecord{firstDetected: now}
			r[img.Id] = rec
		}
		if inUse[img.Id] {
			rec.lastUsed = now
		}
		rec.size = int64(img.Size)
		rec.pinned = img.Pinned
	}
	for id := range r {
		if !current[id] {
			delete(r, id)
		}
	}
}

// candidate is an image that may be removed.
type candidate struct {
	id string
	imageRecord
}

// evictionOrder lists the images neither in use nor pinned, least recently used first, then
// first detected first (the kubelet's imagesInEvictionOrder and byLastUsedAndDetected).
func (r imageRecords) evictionOrder(inUse map[string]bool) []candidate {
	var out []candidate
	for id, rec := range r {
		if inUse[id] || rec.pinned {
			continue
		}
		out = append(out, candidate{id: id, imageRecord: *rec})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if !a.lastUsed.Equal(b.lastUsed) {
			return a.lastUsed.Before(b.lastUsed)
		}
		if !a.firstDetected.Equal(b.firstDetected) {
			return a.firstDetected.Before(b.firstDetected)
		}
		return a.id < b.id
	})
	return out
}

// tooOld splits the candidates into those unused for longer than maxAge, which go whatever the
// usage, and the others (the kubelet's freeOldImages). Nothing is too old before the collector
// ran for maxAge: an image's last use is only known since then.
func tooOld(freeTime, began time.Time, maxAge time.Duration, images []candidate) (old, rest []candidate) {
	if maxAge == 0 || freeTime.Sub(began) <= maxAge {
		return nil, images
	}
	for _, img := range images {
		if freeTime.Sub(img.lastUsed) > maxAge {
			old = append(old, img)
		} else {
			rest = append(rest, img)
		}
	}
	return old, rest
}

// eligibleForSpace keeps, in order, the candidates that may go to free space at freeTime: not
// used at freeTime, detected at least minAge before (the kubelet's freeSpace).
func eligibleForSpace(freeTime time.Time, minAge time.Duration, images []candidate) []candidate {
	var out []candidate
	for _, img := range images {
		if !img.lastUsed.Before(freeTime) {
			continue
		}
		if freeTime.Sub(img.firstDetected) < minAge {
			continue
		}
		out = append(out, img)
	}
	return out
}

// spaceToFree is how many bytes image GC frees on an image file system of capacity bytes with
// available bytes free: none below the high threshold, else down to the low threshold. usage
// is the usage in percent, as the kubelet rounds it.
func spaceToFree(capacity, available int64, p ImagePolicy) (usage int, bytes int64) {
	if available > capacity {
		available = capacity
	}
	usage = 100 - int(available*100/capacity)
	if usage < p.HighThresholdPercent {
		return usage, 0
	}
	return usage, capacity*int64(100-p.LowThresholdPercent)/100 - available
}

// formatSize writes a size as the kubelet's FreeDiskSpaceFailed message does.
func formatSize(b int64) string {
	const (
		kib = 1024
		mib = 1024 * kib
		gib = 1024 * mib
		tib = 1024 * gib
	)
	s := float64(b)
	switch {
	case s < kib:
		return fmt.Sprintf("%d B", b)
	case s < mib:
		return fmt.Sprintf("%.1f KiB", s/kib)
	case s < gib:
		return fmt.Sprintf("%.1f MiB", s/mib)
	case s < tib:
		return fmt.Sprintf("%.1f GiB", s/gib)
	default:
		return fmt.Sprintf("%.1f TiB", s/tib)
	}
}
