package provider

import (
	"context"
	"testing"
	"time"
)

func TestListedSince(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name          string
		listing, sync time.Time
		want          bool
	}{
		{"no sync yet", base, time.Time{}, true},
		{"listing started after the sync ended", base.Add(time.Second), base, true},
		{"listing started as the sync ended", base, base, true},
		{"listing started before the sync ended", base, base.Add(time.Millisecond), false},
		{"never listed", time.Time{}, base, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := listedSince(tc.listing, tc.sync); got != tc.want {
				t.Fatalf("listedSince(%v, %v) = %v, want %v", tc.listing, tc.sync, got, tc.want)
			}
		})
	}
}

func TestClassifySync(t *testing.T) {
	running := map[string]string{"c1": "CONTAINER_RUNNING", "s1": "true"}
	exited := map[string]string{"c1": "CONTAINER_EXITED", "s1": "true"}
	afterStart := syncCadence{actedStates: running}
	for _, tc := range []struct {
		name   string
		c      syncCadence
		turn   bool
		why    syncTrigger
		states map[string]string
		want   syncKind
	}{
		{"relister's wake for what the last sync started is its follow-up", afterStart, true, syncTrigger{Relist: true}, running, syncFollowUp},
		{"relister's wake for a change since is a sync of its own", afterStart, true, syncTrigger{Relist: true}, exited, syncCounted},
		{"a probe verdict in its turn is synced at once", afterStart, true, syncTrigger{Probe: true}, running, syncCounted},
		{"a probe verdict before its turn is only reported", syncCadence{}, false, syncTrigger{Probe: true}, running, syncReportOnly},
		{"a probe verdict that comes with a runtime change is synced", syncCadence{}, false, syncTrigger{Probe: true, Relist: true}, exited, syncCounted},
		{"an API update is synced at once (not paced)", syncCadence{}, false, syncTrigger{}, running, syncCounted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := classifySync(tc.c, tc.turn, tc.why, tc.states); got != tc.want {
				t.Fatalf("classifySync = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestAfterSync(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	start, end := base.Add(time.Second), base.Add(2*time.Second)
	states := map[string]string{"c1": "CONTAINER_RUNNING"}
	pending := syncCadence{lastSyncEnd: base, probeSyncSince: base.Add(500 * time.Millisecond), probeSyncProbes: true}

	got := pending.afterSync(syncCounted, start, end, false, states)
	if !got.lastSyncEnd.Equal(end) || !got.probeSyncSince.IsZero() || got.probeSyncProbes || got.actedStates != nil {
		t.Fatalf("a counted sync must end the cadence's last sync and take the waiting verdict's turn: %+v", got)
	}
	got = pending.afterSync(syncCounted, start, end, true, states)
	if got.actedStates == nil {
		t.Fatalf("a sync that acted must remember the states its follow-up reports: %+v", got)
	}
	late := syncCadence{lastSyncEnd: base, probeSyncSince: start.Add(time.Millisecond)}
	if got := late.afterSync(syncCounted, start, end, false, states); !got.probeSyncSince.Equal(late.probeSyncSince) {
		t.Fatalf("a verdict that came during the sync must still wait for a sync of its own: %+v", got)
	}
	if got := pending.afterSync(syncReportOnly, start, end, false, states); !got.lastSyncEnd.Equal(base) || got.probeSyncSince.IsZero() {
		t.Fatalf("a report-only sync must leave the cadence as it was: %+v", got)
	}
	followed := syncCadence{lastSyncEnd: base, actedStates: states}
	if got := followed.afterSync(syncFollowUp, start, end, false, states); !got.lastSyncEnd.Equal(base) || got.actedStates != nil {
		t.Fatalf("a follow-up must keep the last sync's end and be made once: %+v", got)
	}
}

func TestProbeSyncDueAndTerminationTurns(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	idle := syncCadence{lastSyncEnd: base}
	waiting := syncCadence{lastSyncEnd: base, probeSyncSince: base.Add(100 * time.Millisecond)}
	if idle.probeSyncDue(base.Add(time.Second)) {
		t.Error("no verdict waits: nothing is due")
	}
	if waiting.probeSyncDue(base.Add(-time.Millisecond)) {
		t.Error("a verdict's sync is not due before a listing that began after the last sync ended")
	}
	if !waiting.probeSyncDue(base.Add(time.Second)) {
		t.Error("a verdict's sync is due once the runtime was listed after the last sync")
	}
	if n := idle.syncsBeforeTermination(); n != 1 {
		t.Errorf("an idle pod's termination waits for %d turns, want 1", n)
	}
	if n := waiting.syncsBeforeTermination(); n != 2 {
		t.Errorf("a termination behind a verdict's sync waits for %d turns, want 2", n)
	}
}

func TestRelistClockWaitsForTheNextListing(t *testing.T) {
	c := newRelistClock()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c.completed(base)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.waitListedSince(ctx, base); err != nil {
		t.Fatalf("a listing that started at t satisfies a wait for t: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- c.waitListedSince(ctx, base.Add(time.Second)) }()
	c.completed(base.Add(500 * time.Millisecond)) // too early: keeps waiting
	select {
	case err := <-done:
		t.Fatalf("the wait ended on a listing that began too early: %v", err)
	default:
	}
	c.completed(base.Add(1500 * time.Millisecond))
	if err := <-done; err != nil {
		t.Fatalf("wait: %v", err)
	}
	var none *relistClock
	if err := none.waitListedSince(ctx, base.Add(time.Hour)); err != nil || !none.last().IsZero() {
		t.Fatal("without a relister nothing waits")
	}
	cctx, ccancel := context.WithCancel(context.Background())
	ccancel()
	if err := c.waitListedSince(cctx, base.Add(time.Hour)); err == nil {
		t.Fatal("a cancelled wait must return its context's error")
	}
}
