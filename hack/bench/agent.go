// The agent process: its RSS and CPU from /proc over a measurement window.

package main

import (
	"context"
	"math"
	"time"

	"github.com/vk-cri/vk-cri/internal/procstat"
)

// measureWindow samples RSS every 500 ms and CPU at both ends of a window of length d.
func measureWindow(ctx context.Context, pid, pods int, d time.Duration) *Window {
	w := &Window{Pods: pods}
	if pid == 0 {
		w.Unavailable = "agent PID unknown"
		return w
	}
	cpu0, err := procstat.CPUSeconds(pid)
	if err != nil {
		w.Unavailable = err.Error()
		return w
	}
	start := time.Now()
	var sum float64
	sample := func() {
		if kib, err := procstat.RSSKiB(pid); err == nil {
			mib := kib / 1024
			sum += mib
			w.RSSSamples++
			w.RSSMaxMiB = math.Max(w.RSSMaxMiB, mib)
		}
	}
	sample()
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	end := time.NewTimer(d)
	defer end.Stop()
loop:
	for {
		select {
		case <-tick.C:
			sample()
		case <-end.C:
			break loop
		case <-ctx.Done():
			break loop
		}
	}
	cpu1, err := procstat.CPUSeconds(pid)
	if err != nil {
		w.Unavailable = err.Error()
		return w
	}
	sample()
	w.Seconds = time.Since(start).Seconds()
	w.CPUSeconds = cpu1 - cpu0
	w.CPUPercent = 100 * w.CPUSeconds / w.Seconds
	if w.RSSSamples > 0 {
		w.RSSMeanMiB = sum / float64(w.RSSSamples)
	}
	return w
}
