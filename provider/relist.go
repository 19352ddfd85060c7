package provider

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// relistLoop lists the runtime every RelistPeriod and wakes the worker of each pod whose
// sandboxes or containers changed, like the kubelet's PLEG. containerd 1.6 has no reliable
// container event stream, so listing is the portable way to notice a container exit.
func (p *Provider) relistLoop(ctx context.Context, initial map[string]*podRuntime) {
	last := map[string]map[string]string{}
	for uid, rt := range initial {
		last[uid] = rt.states()
	}
	t := time.NewTicker(p.cfg.RelistPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		lctx, cancel := context.WithTimeout(ctx, p.cfg.RelistPeriod*10)
		listed := time.Now()
		pods, _, err := p.inspector.listAll(lctx)
		cancel()
		if err != nil {
			p.log.WithError(err).Debug("relist failed")
			continue
		}
		p.cfg.Metrics.RuntimeState(runtimeCounts(pods))
		now := map[string]map[string]string{}
		for uid, rt := range pods {
			now[uid] = rt.states()
		}
		for uid, st := range now {
			if syncWorthy(last[uid], st) {
				p.wakePod(types.UID(uid))
			}
		}
		for uid := range last {
			if _, ok := now[uid]; !ok {
				p.wakePod(types.UID(uid))
			}
		}
		last = now
		p.relists.completed(listed)
		p.pokeProbeSyncsDue(listed)
	}
}

func (p *Provider) wakePod(uid types.UID) {
	if rec, ok := p.pods.get(uid); ok {
		rec.mu.Lock()
		rec.relistWake = true
		rec.mu.Unlock()
		rec.poke()
	}
}

// relistThreshold is how long the runtime may go unlisted before the node is unhealthy (the
// kubelet's PLEG threshold).
const relistThreshold = 3 * time.Minute

// SyncLoopHealthy is the healthz "syncloop" check: the relister is what notices container
// changes, so the node is unhealthy when the runtime has not been listed for relistThreshold.
// It reads the relister's clock, the one the pod workers' cadence waits on.
func (p *Provider) SyncLoopHealthy() error {
	return relistHealth(p.relists.last(), time.Now(), relistThreshold)
}

// relistHealth judges the last completed listing, stamped with the time it started as the
// kubelet's PLEG stamps its relistTime (pleg/generic.go: Healthy); none yet is unhealthy.
func relistHealth(last, now time.Time, threshold time.Duration) error {
	if last.IsZero() {
		return errors.New("the runtime has not been listed yet")
	}
	if since := now.Sub(last); since > threshold {
		return fmt.Errorf("the runtime was last listed %v ago; threshold is %v", since.Round(time.Second), threshold)
	}
	return nil
}

// states maps each sandbox and container of a pod to its state.
func (r *podRuntime) states() map[string]string {
	out := make(map[string]string, len(r.Sandboxes)+len(r.Containers))
	for _, sb := range r.Sandboxes {
		out["s"+sb.ID] = fmt.Sprint(sb.Ready)
	}
	for _, c := range r.Containers {
		out["c"+c.ID] = c.State.String()
	}
	return out
}

// syncWorthy reports whether a pod's runtime state changed in a way its worker must look at: a
// sandbox or container appeared or changed state. One that was only removed is not, as with the
// kubelet's PLEG (vk-cri removes dead instances itself).
func syncWorthy(prev, cur map[string]string) bool {
	for id, st := range cur {
		if old, ok := prev[id]; !ok || old != st {
			return true
		}
	}
	return false
}
