package provider

import (
	"context"
	"time"
)

// When CrashLoopBackOff shows
//
// The kubelet's status shows a container's CrashLoopBackOff from the sync after the one that
// found the back-off: that sync's result fills the reason cache, and a status is generated when
// a sync starts (kubelet_pods.go convertToAPIContainerStatuses reads kl.reasonCache). Which sync
// comes next depends on how the crashed instance was reported:
//
//   - an instance that ran for a while is reported once, by the relist that saw it exit; the
//     sync that finds the back-off returns ErrCrashLoopBackOff and the pod worker requeues the
//     pod for the back-off's end (pod_workers.go completeWork, MinBackoffExpiration, jittered).
//     That sync shows CrashLoopBackOff and restarts the container at once: the reason is
//     visible for one sync only. Until then the status shows the exit (backoffResync).
//   - an instance that exits within a relist period of its start is reported again while the
//     sync that finds the back-off runs (the follow-up relist of the sync that started it and
//     the periodic relist both see it: PLEGOnDemandRelist, pleg/generic.go), so the pod worker
//     has an update pending when that sync ends and syncs again as soon as a relist newer than
//     its end completes (completeWork requeues a pending update at once; podWorkerLoop waits
//     for podCache.GetNewerThan(lastSyncTime)). That sync, one relist after the exit, shows
//     CrashLoopBackOff for the rest of the back-off. On the kubelet this is a race that the
//     second report wins most of the time (seen in 6 of 8 runs of such crash loops); vk-cri
//     takes that way every time for a short-lived instance.

// showsBackoffNextRelist reports whether a sync that found the given back-offs is followed by
// a sync one relist later (the second case above): a container newly waiting out a crash-loop
// back-off (previous is the reasons the status showed before this sync) whose crashed instance
// ran for less than one relist period.
func showsBackoffNextRelist(backoff, previous map[string]waitingReason, rt *podRuntime, relistPeriod time.Duration) bool {
	for name, w := range backoff {
		if w.Reason != reasonCrashLoopBackOff || previous[name].Reason == reasonCrashLoopBackOff {
			continue
		}
		cur := rt.latest(name)
		if cur == nil || cur.StartedAt.IsZero() || cur.FinishedAt.IsZero() {
			continue
		}
		if cur.FinishedAt.Sub(cur.StartedAt) < relistPeriod {
			return true
		}
	}
	return false
}

// syncAfterNextRelist wakes the pod's worker once a relist that started after now has
// completed, as the kubelet's pod worker makes a pending sync in its turn.
func (p *Provider) syncAfterNextRelist(ctx context.Context, rec *podRecord) {
	after := time.Now()
	go func() {
		if err := p.relists.waitListedSince(ctx, after); err == nil {
			rec.poke()
		}
	}()
}
