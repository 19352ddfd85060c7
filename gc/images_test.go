package gc

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

const mib = 1 << 20

func img(id string, sizeMiB uint64, pinned bool) *runtimeapi.Image {
	return &runtimeapi.Image{Id: id, Size: sizeMiB * mib, Pinned: pinned}
}

func user(id, image string) *runtimeapi.Container {
	c := ctr(id, "u", "s", "c", exited, t0)
	c.ImageRef = image
	c.Labels = map[string]string{} // owned by anyone: every container counts as a use
	return c
}

func newImageGC(rt *fakeRuntime, clock *clocktesting.FakeClock, p ImagePolicy, fs fakeFs) (*ImageGC, *fakeRecorder, fakeCounter) {
	rec, count := &fakeRecorder{}, fakeCounter{}
	return NewImageGC(ImageGCConfig{Policy: p, NodeName: "vk-gc", Clock: clock}, rt, rt, fs, rec, count,
		logrus.NewEntry(logrus.New())), rec, count
}

func TestImageGCFreesLeastRecentlyUsedDownToTheLowThreshold(t *testing.T) {
	rt := newFakeRuntime()
	for _, i := range []*runtimeapi.Image{img("old", 100, false), img("newer", 100, false), img("used", 300, false),
		img("pause", 50, true), img("newest", 100, false)} {
		rt.images[i.Id] = i
	}
	rt.containers["c1"] = user("c1", "used")
	rt.containers["c2"] = user("c2", "newer")
	clock := clocktesting.NewFakeClock(t0)
	// 1000 MiB, 650 MiB of images + 200 MiB else: 85 % used, the default high threshold.
	fs := fakeFs{rt: rt, capacity: 1000 * mib, other: 200 * mib}
	g, rec, count := newImageGC(rt, clock, DefaultImagePolicy(), fs)
	began := clock.Now()

	// First look: "newer" is in use now; every image is first detected now.
	if err := g.Detect(context.Background()); err != nil {
		t.Fatal(err)
	}
	delete(rt.containers, "c2") // "newer" is no longer used from here on
	clock.Step(time.Minute)
	if err := g.Detect(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Within the minimum age nothing may go: FreeDiskSpaceFailed.
	err := g.GarbageCollect(context.Background(), began)
	if err == nil || len(rec.events) != 1 || rec.events[0].reason != EventFreeDiskSpaceFailed ||
		!strings.Contains(rec.events[0].message, "(85% of 1000.0 MiB used)") ||
		!strings.Contains(rec.events[0].message, "freed 0 bytes") {
		t.Fatalf("within the minimum age: err %v, events %+v", err, rec.events)
	}
	if len(rt.calls) != 0 {
		t.Fatalf("removed within the minimum age: %v", rt.calls)
	}

	// 2 minutes after detection: down to 80 % means freeing 50 MiB: the least recently used
	// ("old" and "newest", never used; "old" first detected with them, so by ID) goes alone.
	clock.Step(2 * time.Minute)
	rec.events = nil
	if err := g.GarbageCollect(context.Background(), began); err != nil {
		t.Fatalf("GarbageCollect: %v", err)
	}
	if !reflect.DeepEqual(rt.calls, []string{"RemoveImage newest"}) {
		t.Errorf("calls: %v", rt.calls)
	}
	if len(rec.events) != 0 || count[ReasonSpace] != 1 {
		t.Errorf("events %+v, metric %v", rec.events, count)
	}

	// Needing 350 MiB: "old", then "newer" (last used a while ago); never "used" nor "pause".
	fs.other = 500 * mib
	g.fs = fs
	rt.calls = nil
	err = g.GarbageCollect(context.Background(), began)
	if !reflect.DeepEqual(rt.calls, []string{"RemoveImage old", "RemoveImage newer"}) {
		t.Errorf("calls: %v", rt.calls)
	}
	if err == nil || rec.events[0].reason != EventFreeDiskSpaceFailed || !strings.Contains(rec.events[0].message, "freed 209715200 bytes") {
		t.Errorf("not enough freed: err %v, events %+v", err, rec.events)
	}
	if _, ok := rt.images["used"]; !ok {
		t.Error("an image in use was removed")
	}
	if _, ok := rt.images["pause"]; !ok {
		t.Error("a pinned image was removed")
	}
	if count[ReasonSpace] != 3 {
		t.Errorf("metric: %v", count)
	}
}

func TestImageGCMaximumAge(t *testing.T) {
	rt := newFakeRuntime()
	rt.images["a"], rt.images["b"] = img("a", 10, false), img("b", 10, false)
	rt.containers["c"] = user("c", "b")
	clock := clocktesting.NewFakeClock(t0)
	p := DefaultImagePolicy()
	p.MaxAge = 10 * time.Minute
	// Plenty of space: only age matters.
	g, _, count := newImageGC(rt, clock, p, fakeFs{rt: rt, capacity: 1000 * mib})
	began := clock.Now()
	if err := g.GarbageCollect(context.Background(), began); err != nil {
		t.Fatal(err)
	}
	delete(rt.containers, "c")
	clock.Step(10 * time.Minute)
	if err := g.GarbageCollect(context.Background(), began); err != nil || len(rt.calls) != 0 {
		t.Fatalf("not older than the maximum age yet: err %v, calls %v", err, rt.calls)
	}
	// "a" was never used (last used: never); "b" was last used 10m1s ago.
	clock.Step(time.Second)
	if err := g.GarbageCollect(context.Background(), began); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rt.calls, []string{"RemoveImage a", "RemoveImage b"}) || count[ReasonAge] != 2 {
		t.Errorf("calls %v, metric %v", rt.calls, count)
	}
}

func TestImageGCInvalidCapacityAndDeleteUnused(t *testing.T) {
	rt := newFakeRuntime()
	rt.images["a"] = img("a", 10, false)
	clock := clocktesting.NewFakeClock(t0)
	g, rec, _ := newImageGC(rt, clock, DefaultImagePolicy(), fakeFs{rt: rt, capacity: 0})
	if err := g.GarbageCollect(context.Background(), t0); err == nil || len(rec.events) != 1 ||
		rec.events[0].reason != EventInvalidDiskCapacity || rec.events[0].kind != v1.EventTypeWarning {
		t.Errorf("capacity 0: err %v, events %+v", err, rec.events)
	}
	clock.Step(DefaultImageMinimumGCAge)
	freed, err := g.DeleteUnusedImages(context.Background())
	if err != nil || freed != 10*mib || len(rt.images) != 0 {
		t.Errorf("DeleteUnusedImages: freed %d, err %v, left %v", freed, err, rt.images)
	}
}

func TestImagePolicyValidate(t *testing.T) {
	if err := DefaultImagePolicy().Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
	for _, p := range []ImagePolicy{
		{HighThresholdPercent: 101, LowThresholdPercent: 80},
		{HighThresholdPercent: 80, LowThresholdPercent: 80},
		{HighThresholdPercent: 85, LowThresholdPercent: -1},
		{HighThresholdPercent: 85, LowThresholdPercent: 80, MinAge: 2 * time.Minute, MaxAge: time.Minute},
	} {
		if err := p.Validate(); err == nil {
			t.Errorf("%+v: accepted", p)
		}
	}
	if !(ImagePolicy{HighThresholdPercent: 100}).Disabled() || DefaultImagePolicy().Disabled() {
		t.Error("Disabled")
	}
}

func TestSpaceToFree(t *testing.T) {
	for _, c := range []struct {
		capacity, available int64
		usage               int
		bytes               int64
	}{
		{1000, 151, 85, 49}, // 84.9 % rounds to 85 as the kubelet's integer arithmetic does
		{1000, 160, 84, 0},
		{1000, 0, 100, 200},
		{1000, 2000, 0, 0}, // available beyond capacity counts as capacity
	} {
		u, b := spaceToFree(c.capacity, c.available, DefaultImagePolicy())
		if u != c.usage || b != c.bytes {
			t.Errorf("%d/%d: got %d%%, %d bytes; want %d%%, %d", c.available, c.capacity, u, b, c.usage, c.bytes)
		}
	}
}
