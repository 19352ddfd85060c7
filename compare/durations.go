package compare

import (
	"fmt"
	"math"
)

// How long each state was visible
//
// The timeline comparison (timeline.go) decides which states each node showed and in which
// order; a state one node writes and replaces a few milliseconds later counts there as shown,
// while a controller or a person polling the API never sees it. So each state of a timeline
// also records how long it was visible (TimelineEntry.Seconds): from the watch event that
// showed it to the event that replaced it, or to the pod's removal from the API. Both ends are
// seen by the same watch of the same API server, so the resolution is the jitter of the watch's
// delivery (a few milliseconds on loopback, tens on a loaded 2-core machine); times are kept to
// the millisecond. The last state of a pod still in the API when the timelines stopped is open
// (Open): it was visible at least that long.
//
// Durations are compared on the same collapsed, masked timelines as the states: consecutive
// entries that are equal once ignored and racy fields are left out are one state, visible for
// the sum of their times; the states of A and B are paired as in the timeline comparison (a
// longest common subsequence of equal states), and a state of B that A skipped was visible on
// A for 0 s.
//
// What sets a state's visible time in the kubelet: every status is written by the status
// manager right after the sync (or probe verdict) that generated it (status_manager.go
// SetPodStatus, syncPod), and a sync that follows a runtime change waits for the next relist
// (pod_workers.go podCache.GetNewerThan; the generic PLEG relists every second plus the
// relist's own duration). A state whose end waits for the cadence is replaced after at most two
// such waits (the relist that notices the change, the sync's turn: DeletionEnvelope, 2.5 s);
// one written by a sync and replaced by the follow-up of that sync (PLEGOnDemandRelist) lasts
// one sync (0.1-0.7 s here). How long such states last is the chance of the relists' phases
// and of the machine's load, on either node, and so is how fast each node gets through a state
// whose end is the runtime's work (ContainerCreating lasted 5.4 s on a loaded reference node
// and 0.5 s on vk-cri in the same run). A state the kubelet shows for longer than the envelope
// is held by the pod's behaviour (a back-off, a grace period, a probe's period), and what the
// issue of missed states is about is a node that writes such a state late, keeping the state
// before it on show instead: the kubelet shows CrashLoopBackOff one relist after a quick crash
// for the rest of the back-off, a node that shows the exit until the back-off ends and
// CrashLoopBackOff only for the moment its restart takes has the same states in the same order
// but one of them is never seen. The rule (durationsDiffer), for each state S of B's timeline
// that B showed for longer than twice DeletionEnvelope (5 s: what the cadence explains, with a
// margin for a loaded machine) and that is not B's first state:
//
//   - A is fine when it showed S for at least visibleEnough (0.75 s: more than one sync takes
//     here, less than a relist period, so a watcher polling at the relist period sees it
//     most of the time), or when it did not show the state before S in B's timeline (P) at
//     all (another progression: the timeline comparison judges it);
//   - otherwise A differs when it showed P for longer than B did by more than DeletionEnvelope:
//     A held on to P while B had moved on to S. A's time of P counts the states A showed between
//     P and S that B skipped (B may go from a crashed container's running state straight to
//     CrashLoopBackOff, A through the exit). When A showed both P and S briefly, it went
//     through them faster than B (the runtime's work, its load): not a difference.
//
// States only A showed, and A's states longer than B's, are never a difference here; the
// kubelet's own alternatives are covered: whether it shows a quick crash's CrashLoopBackOff for
// most of the back-off or only at its end is a race it wins either way from run to run, and a
// node that always does the one is as good as the kubelet that does both. The first state is
// the API server's (Pending, no status yet), written before either node acts.
//
// Diffs are at "pods/<pod>/timeline[<i>].visible" (A's index of S; PathB has B's).

const (
	// minLastingSeconds: a state B shows for longer than this outlasted the sync cadence, also
	// on a loaded machine: two envelopes (a state ended by the next relist lasted 2.59 s on a
	// loaded reference node: the running state of a container that exits at once).
	minLastingSeconds = 2 * DeletionEnvelope
	// visibleEnough is how long A must show such a state at least.
	visibleEnough = 0.75 * relistPeriod
	// heldLongerSeconds is how much longer than B A must have shown the state before it, for a
	// brief S to be a difference.
	heldLongerSeconds = DeletionEnvelope
)

// durationsDiffer reports whether A's visible times differ from B's for a state S that B showed
// for bS seconds after the state P that B showed for bP: A showed S for aS and P for aP.
func durationsDiffer(aS, aP, bS, bP float64) bool {
	const eps = 1e-9
	return bS > minLastingSeconds+eps && aS+eps < visibleEnough && aP > bP+heldLongerSeconds+eps
}

// stampDurations returns a copy of a timeline with each entry's Seconds set: until the next
// entry, and for the last one until end (seconds on the same clock as At), marked Open when
// the pod was still in the API then.
func stampDurations(t []TimelineEntry, end float64, open bool) []TimelineEntry {
	out := make([]TimelineEntry, len(t))
	copy(out, t)
	for i := range out {
		until := end
		if i+1 < len(out) {
			until = out[i+1].At
		}
		s := math.Max(0, math.Round((until-out[i].At)*1000)/1000)
		out[i].Seconds = &s
		out[i].Open = open && i == len(out)-1
	}
	return out
}

// visibleState is one state of a collapsed timeline with how long it was visible.
type visibleState struct {
	index   int // of its first entry in the timeline
	key     string
	seconds float64
	open    bool
	known   bool // every entry of it has a recorded duration
}

// collapseVisible collapses a timeline given as masked keys, summing the visible times.
func collapseVisible(t []TimelineEntry, keys []string) []visibleState {
	var out []visibleState
	for i, k := range keys {
		if n := len(out); n > 0 && out[n-1].key == k {
			last := &out[n-1]
			if t[i].Seconds == nil {
				last.known = false
			} else {
				last.seconds += *t[i].Seconds
			}
			last.open = t[i].Open
			continue
		}
		s := visibleState{index: i, key: k, open: t[i].Open, known: t[i].Seconds != nil}
		if s.known {
			s.seconds = *t[i].Seconds
		}
		out = append(out, s)
	}
	return out
}

// durations compares how long the states of two timelines were visible (ka and kb are their
// masked keys, as the timeline comparison uses them).
func (d *differ) durations(path string, a, b []TimelineEntry, ka, kb []string) {
	va, vb := collapseVisible(a, ka), collapseVisible(b, kb)
	if len(va) == 0 || len(vb) == 0 {
		return // no timeline: another diff says so
	}
	sa, sb := make([]string, len(va)), make([]string, len(vb))
	for i, s := range va {
		sa[i] = s.key
	}
	for j, s := range vb {
		sb[j] = s.key
	}
	// A's partner of each of B's states, when A showed it (an LCS of equal states).
	partner := map[int]int{}
	for _, r := range align(sa, sb) {
		if r.a >= 0 && r.b >= 0 && sa[r.a] == sb[r.b] {
			partner[r.b] = r.a
		}
	}
	for j := 1; j < len(vb); j++ {
		s, p := vb[j], vb[j-1]
		ip, shownP := partner[j-1]
		if !s.known || s.open || !p.known || !shownP {
			continue // durations not recorded, or A went another way
		}
		aS, pathA := 0.0, path
		i, shown := partner[j]
		if shown {
			if !va[i].known {
				continue
			}
			aS, pathA = va[i].seconds, fmt.Sprintf("%s[%d].visible", path, va[i].index)
		}
		// How long A took from P to S: P and the states A showed between them that B did not.
		end := len(va)
		if shown {
			end = i
		} else {
			for k := j + 1; k < len(vb); k++ {
				if next, ok := partner[k]; ok && next > ip {
					end = next
					break
				}
			}
		}
		aP, known := 0.0, true
		for k := ip; k < end; k++ {
			known = known && va[k].known
			aP += va[k].seconds
		}
		if !known {
			continue
		}
		if !durationsDiffer(aS, aP, s.seconds, p.seconds) {
			continue
		}
		x := Diff{
			Path:  pathA,
			PathB: fmt.Sprintf("%s[%d].visible", path, s.index),
			A:     fmt.Sprintf("%.2fs, after the state before it for %.2fs", aS, aP),
			B:     fmt.Sprintf("%.2fs, after the state before it for %.2fs: %s", s.seconds, p.seconds, b[s.index].String()),
		}
		if !shown {
			x.A = fmt.Sprintf("never shown; the state before it for %.2fs", aP)
		}
		d.add(x)
	}
}
