package provider

import (
	"context"
	"maps"
	"sync"
	"time"
)

// The kubelet's sync cadence
//
// The kubelet's pod worker starts each sync of a pod only once its PLEG has listed the runtime
// after the pod's previous sync ended (pod_workers.go: podCache.GetNewerThan(uid, lastSyncTime),
// which the generic PLEG's relist, every second, satisfies when it completes). Only a sync that
// acted on the runtime is followed at once by a relist of that one pod (PLEGOnDemandRelist, GA
// in v1.37), whose follow-up sync reports what the actions did. So a sync a probe verdict asks
// for (handleProbeSync), the one that begins a deletion (SyncTerminatingPod) and the one that
// ends it (SyncTerminatedPod, after which the status manager deletes the pod from the API) each
// wait for the next relist when the previous sync ended after the last one. Seen through the
// API: a pod deleted right after its readiness probe made it Ready is killed two relists later
// (the sync the verdict asked for takes the first), and leaves the API one relist after its
// containers stopped. vk-cri keeps the same cadence with its own relister's clock: a probe
// verdict's status shows at once (the kubelet's status manager writes it without a sync), the
// sync it asks for waits for its turn, and so do a deletion's two steps.

// relistClock tells when the relister last completed a listing of the runtime (the time the
// listing started, as the PLEG stamps its cache) and lets callers wait for the next one. A nil
// clock (no relister) never makes anyone wait.
type relistClock struct {
	mu        sync.Mutex
	lastStart time.Time
	next      chan struct{} // closed when the next listing completes
}

func newRelistClock() *relistClock {
	return &relistClock{next: make(chan struct{})}
}

// completed records a listing that started at start and wakes the waiters.
func (c *relistClock) completed(start time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if start.After(c.lastStart) {
		c.lastStart = start
	}
	close(c.next)
	c.next = make(chan struct{})
}

// last returns when the last completed listing started (zero: none yet or no clock).
func (c *relistClock) last() time.Time {
	if c == nil {
		return time.Time{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastStart
}

// waitListedSince returns once a listing that started at or after t has completed, or when ctx
// ends.
func (c *relistClock) waitListedSince(ctx context.Context, t time.Time) error {
	if c == nil {
		return nil
	}
	for {
		c.mu.Lock()
		done, next := listedSince(c.lastStart, t), c.next
		c.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-next:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// listedSince reports whether the runtime's state is newer than t: the last completed listing
// started at or after it (or nothing has synced yet: t is zero).
func listedSince(lastListing, t time.Time) bool {
	return t.IsZero() || !lastListing.Before(t)
}

// syncCadence is where a pod stands in the kubelet's sync cadence. Its worker's record holds it
// (under the record's lock).
type syncCadence struct {
	// lastSyncEnd is when the pod's last sync that the kubelet would also have made ended.
	lastSyncEnd time.Time
	// actedStates are the pod's runtime states right after its last sync acted on them (nil
	// when that sync did not act): the relister's next wake for them is the follow-up sync the
	// kubelet's on-demand relist made at once, not a sync of its own.
	actedStates map[string]string
	// probeSyncSince is when a probe verdict asked for a sync that has not had its turn yet
	// (zero: none waits).
	probeSyncSince time.Time
	// probeSyncProbes is set when that sync is to probe the containers it finds started but
	// not ready (a startup verdict asked for it).
	probeSyncProbes bool
}

// syncKind is how one sync of vk-cri's worker counts in the kubelet's cadence.
type syncKind int

const (
	// syncCounted is a sync the kubelet makes too: it ends the pod's last sync.
	syncCounted syncKind = iota
	// syncReportOnly reports a probe verdict whose sync has not had its turn: the kubelet's
	// status manager writes the verdict at once, its pod worker still waits for the relist.
	syncReportOnly
	// syncFollowUp is the relister's wake for what the pod's last sync did: the kubelet made
	// that sync right after acting (its on-demand relist), so the cadence stands.
	syncFollowUp
)

// syncTrigger is what asked for one sync of vk-cri's worker.
type syncTrigger struct {
	// Relist: the relister saw the pod's runtime state change.
	Relist bool
	// Probe: a readiness or startup verdict.
	Probe bool
}

// classifySync decides how a sync counts: turn is whether the runtime was listed since the
// pod's last sync ended, and states are the runtime states the sync starts from.
func classifySync(c syncCadence, turn bool, why syncTrigger, states map[string]string) syncKind {
	switch {
	case why.Relist && c.actedStates != nil && maps.Equal(c.actedStates, states):
		return syncFollowUp
	case why.Probe && !why.Relist && !turn:
		return syncReportOnly
	}
	return syncCounted
}

// afterSync is the cadence once a sync of the given kind that started at start ended at end;
// acted tells whether it acted on the runtime, leaving it in the given states. A verdict that
// came while the sync ran still waits for a sync of its own.
func (c syncCadence) afterSync(kind syncKind, start, end time.Time, acted bool, states map[string]string) syncCadence {
	switch kind {
	case syncFollowUp:
		c.actedStates = nil
		return c
	case syncReportOnly:
		return c
	}
	c.lastSyncEnd = end
	if !c.probeSyncSince.After(start) {
		c.probeSyncSince, c.probeSyncProbes = time.Time{}, false
	}
	c.actedStates = nil
	if acted {
		c.actedStates = states
	}
	return c
}

// probeSyncDue reports whether a sync a probe verdict asked for may run now: one waits and the
// runtime was listed since the pod's last sync ended.
func (c syncCadence) probeSyncDue(lastListing time.Time) bool {
	return !c.probeSyncSince.IsZero() && listedSince(lastListing, c.lastSyncEnd)
}

// syncsBeforeTermination is how many turns a deletion waits before its containers are stopped:
// its own, after the one of a sync a probe verdict asked for and that still waits (the kubelet
// makes that sync first; the deletion cuts it short, so it ends as soon as it starts).
func (c syncCadence) syncsBeforeTermination() int {
	if c.probeSyncSince.IsZero() {
		return 1
	}
	return 2
}

// awaitTerminationTurn blocks until the kubelet's pod worker would begin the pod's termination.
func (p *Provider) awaitTerminationTurn(ctx context.Context, rec *podRecord) error {
	start := time.Now()
	rec.mu.Lock()
	c := rec.cadence
	rec.mu.Unlock()
	after := c.lastSyncEnd
	for i := c.syncsBeforeTermination(); i > 0; i-- {
		if err := p.relists.waitListedSince(ctx, after); err != nil {
			return err
		}
		after = time.Now()
	}
	p.log.WithFields(map[string]any{"pod": rec.identity.Namespace + "/" + rec.identity.Name, "turns": c.syncsBeforeTermination(),
		"lastSyncEnd": c.lastSyncEnd, "waited": time.Since(start).Round(time.Millisecond)}).Debug("termination begins in its turn")
	return nil
}

// removeFromAPIInTurn removes a terminated pod from the API once the runtime was listed after
// its containers stopped at stoppedAt, when the kubelet's pod worker makes the sync
// (SyncTerminatedPod) that lets its status manager delete the pod. A shutdown of vk-cri ends
// the wait, not the removal.
func (p *Provider) removeFromAPIInTurn(ctx context.Context, stoppedAt time.Time, remove func(context.Context)) {
	_ = p.relists.waitListedSince(ctx, stoppedAt)
	remove(context.WithoutCancel(ctx))
}

// pokeProbeSyncsDue wakes the workers whose probe-requested sync has its turn after a listing.
func (p *Provider) pokeProbeSyncsDue(lastListing time.Time) {
	for _, rec := range p.pods.list() {
		rec.mu.Lock()
		due := rec.cadence.probeSyncDue(lastListing)
		rec.mu.Unlock()
		if due {
			rec.poke()
		}
	}
}
