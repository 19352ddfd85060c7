package compare

import (
	"fmt"
	"math"
)

// Deletion times
//
// A deletion time (delete call to pod gone from the API) is the sum of two parts:
//
//   - the behaviour part: how long the containers took to stop. That is what the node did with
//     the grace period (pod_workers.go SyncTerminatingPod → killPod): run the preStop hooks,
//     send SIGTERM, and kill what is still running when the grace period ends. A container that
//     exits on SIGTERM ends this part at once; one that ignores it ends it at the grace period.
//   - the cadence part: how long the node's sync loop takes to notice and to finish. In the
//     kubelet every sync of a pod waits for a PLEG cache newer than the end of the pod's
//     previous sync (pod_workers.go podWorkerLoop: podCache.GetNewerThan(uid, lastSyncTime)),
//     and the generic PLEG relists every second (kubelet.go genericPlegRelistPeriod; the timer
//     is reset after a relist returns, so relists start one period plus the relist's own
//     duration apart: pleg/generic.go workerLoopIteration). A deletion makes two such waits:
//     the terminating sync (it waits when the pod's previous sync ended less than a relist ago)
//     and the terminated sync (it always waits for the relist after the terminating sync, whose
//     end is after the containers stopped). After the terminated sync the status manager
//     patches the terminal status and deletes the pod at once (status_manager.go syncPod:
//     canBeDeleted once SyncTerminatedPod has finished); the 100 ms volume-manager loops and
//     these API calls are small next to the relists. vk-cri keeps the same cadence with its own
//     relister (provider/cadence.go), but the phase of either node's relists relative to the
//     delete call is chance.
//
// So two deletions agree when one behaviour part explains both: each time may exceed it by 0 to
// DeletionEnvelope seconds, so the two times may differ by up to DeletionEnvelope. Fixed buckets
// cannot say that: 5.6 s and 7.1 s at grace 5 are the same behaviour (the grace period, then
// 0.6 s and 2.1 s of cadence) across a bucket edge, while 0.4 s and 5.2 s at grace 5 (one node
// let the pod go at once, the other waited for the grace period) differ, and so do 30 s and 5 s.
//
// When a scenario is run again (--retries), the reference node B, the kubelet, has shown how
// much its own deletion of the same pod moves between runs of the scenario: A's time is then
// compared with the whole range of B's times, widened by the envelope on either side.
//
// A grace period shorter than the envelope cannot be told from a prompt exit by the time alone;
// the containers' terminated states (exit code 137 or the program's own) in the timeline tell
// them apart.

const (
	// relistPeriod is the generic PLEG's relist period, in seconds (pkg/kubelet/kubelet.go
	// genericPlegRelistPeriod).
	relistPeriod = 1.0
	// relistDuration is what a relist adds to the interval between two relists' starts: the
	// PLEG's timer starts after the relist returns. It is an allowance for a loaded 2-core
	// machine (a relist lists the runtime's pods and containers and inspects the changed ones),
	// not a measured bound.
	relistDuration = 0.25
	// deletionRelistWaits is how many relist intervals a deletion's path waits at most: the
	// terminating sync's and the terminated sync's podCache.GetNewerThan.
	deletionRelistWaits = 2
)

// DeletionEnvelope is how much the kubelet's sync cadence can add to a deletion, in seconds:
// deletionRelistWaits relist intervals. Two deletion times of the same behaviour differ by at
// most this much.
const DeletionEnvelope = deletionRelistWaits * (relistPeriod + relistDuration)

// RunHistory is what the earlier runs of a scenario showed, when it is run again.
type RunHistory struct {
	// RefDeletions holds, per pod, node B's deletion times (seconds, pods gone) in earlier runs.
	RefDeletions map[string][]float64
}

// historyOf collects the reference node's deletion times from earlier attempts.
func historyOf(earlier []Attempt) RunHistory {
	h := RunHistory{RefDeletions: map[string][]float64{}}
	for _, a := range earlier {
		for pod, s := range a.DeletionsB {
			h.RefDeletions[pod] = append(h.RefDeletions[pod], s)
		}
	}
	return h
}

// goneDeletions lists, per pod, the deletion time of each pod of the record that is gone.
func goneDeletions(rec *SideRecord) map[string]float64 {
	if rec == nil {
		return nil
	}
	var out map[string]float64
	for name, p := range rec.Pods {
		if p == nil || p.Deletion == nil || !p.Deletion.Gone {
			continue
		}
		if out == nil {
			out = map[string]float64{}
		}
		out[name] = p.Deletion.Seconds
	}
	return out
}

// deletionRange is the range of the reference node's deletion times: its time in this run and
// in the earlier ones.
type deletionRange struct {
	min, max float64
	runs     int
}

func refRange(b float64, earlier []float64) deletionRange {
	r := deletionRange{min: b, max: b, runs: 1 + len(earlier)}
	for _, s := range earlier {
		r.min, r.max = math.Min(r.min, s), math.Max(r.max, s)
	}
	return r
}

// deletionsAgree reports whether A's deletion time is explained by the behaviour B showed: it
// lies within DeletionEnvelope of the range of B's times (this run's and earlier runs').
func deletionsAgree(a float64, ref deletionRange) bool {
	const eps = 1e-9
	return a >= ref.min-DeletionEnvelope-eps && a <= ref.max+DeletionEnvelope+eps
}

// deletion compares two deletion records; refEarlier are node B's times for this pod in
// earlier runs of the scenario.
func (d *differ) deletion(path string, a, b *DeletionRecord, refEarlier []float64) {
	if a == nil && b == nil {
		return
	}
	if a == nil || b == nil || a.Gone != b.Gone || a.GracePeriodSeconds != b.GracePeriodSeconds {
		d.value(path, deletionSummary(a), deletionSummary(b))
		return
	}
	if !a.Gone {
		return
	}
	ref := refRange(b.Seconds, refEarlier)
	if deletionsAgree(a.Seconds, ref) {
		return
	}
	bs := deletionSummary(b)
	if ref.runs > 1 {
		bs += fmt.Sprintf("; %.1f-%.1fs in %d runs", ref.min, ref.max, ref.runs)
	}
	d.add(Diff{Path: path, A: deletionSummary(a), B: bs})
}

// deletionSummary describes a deletion: its time and how it relates to the grace period.
func deletionSummary(r *DeletionRecord) string {
	if r == nil {
		return Absent
	}
	g := r.GracePeriodSeconds
	switch {
	case !r.Gone:
		return fmt.Sprintf("not gone (grace %ds)", g)
	case g == 0:
		return fmt.Sprintf("%.1fs (grace 0s)", r.Seconds)
	case r.Seconds < float64(g):
		return fmt.Sprintf("%.1fs, %.1fs before the grace period (%ds) ended", r.Seconds, float64(g)-r.Seconds, g)
	}
	return fmt.Sprintf("%.1fs, the grace period (%ds) and %.1fs", r.Seconds, g, r.Seconds-float64(g))
}
