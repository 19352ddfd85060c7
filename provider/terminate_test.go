package provider

import (
	"testing"
	"time"
)

func TestRemainingGraceCountsFromTheDeletionTimestamp(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		left  time.Duration
		grace int64
		want  int64
	}{
		{2950 * time.Millisecond, 3, 2},
		{30 * time.Second, 30, 30},
		{45 * time.Second, 30, 30},
		{-time.Second, 5, 0},
	} {
		if got := remainingGrace(now.Add(tc.left), tc.grace, now); got != tc.want {
			t.Errorf("left %v grace %d: got %d, want %d", tc.left, tc.grace, got, tc.want)
		}
	}
}
