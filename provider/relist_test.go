package provider

import (
	"testing"
	"time"
)

func TestRelistHealthNeverListed(t *testing.T) {
	if err := relistHealth(time.Time{}, time.Now(), 3*time.Minute); err == nil {
		t.Error("a runtime never listed reported healthy")
	}
}

// The syncloop health check and the pod workers' cadence read one clock: the relister's.
func TestSyncLoopHealthyReadsTheRelistClock(t *testing.T) {
	p := &Provider{relists: newRelistClock()}
	if err := p.SyncLoopHealthy(); err == nil {
		t.Fatal("healthy before the first listing")
	}
	p.relists.completed(time.Now().Add(-relistThreshold - time.Minute))
	if err := p.SyncLoopHealthy(); err == nil {
		t.Fatal("healthy although the last listing started past the threshold")
	}
	p.relists.completed(time.Now())
	if err := p.SyncLoopHealthy(); err != nil {
		t.Fatalf("a listing that just completed: %v", err)
	}
	if err := (&Provider{}).SyncLoopHealthy(); err == nil {
		t.Fatal("healthy without a relister")
	}
}
