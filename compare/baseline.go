package compare

import (
	"context"
	"fmt"
	"time"

	"github.com/sirupsen/logrus"
)

// Baselines
//
// A baseline is what the reference node did, recorded once, so that a node can be compared
// with the upstream kubelet on a cluster that has no kubelet node beside it. `vk-cri compare
// record` runs the scenarios on one node only and writes a Result whose scenarios carry that
// node's record as B (status "recorded"); with --runs N each scenario is run N times, and the
// earlier runs' deletion times are kept as earlier attempts, so that a comparison against the
// baseline widens its deletion envelope by the reference's own spread as a live comparison does
// on a retry (deletion.go). `vk-cri compare --baseline FILE` then runs only node A and diffs its
// records against the baseline's, with the same normalisation and rules as a live run: both
// records are normalised to the same placeholders (<node>, <namespace>, <uid>), each with its
// own run's volatile values.
//
// What a baseline cannot give: the two nodes are not run at the same moment, so a difference
// that comes from the cluster (a slow API server, an image pull) is not shared by both sides.

// StatusRecorded: the scenario was run on the baseline's node only, to be compared later.
const StatusRecorded Status = "recorded"

// BaselineOf indexes a recorded result by scenario ID.
func BaselineOf(r *Result) (map[string]*ScenarioResult, error) {
	out := make(map[string]*ScenarioResult, len(r.Scenarios))
	for _, sc := range r.Scenarios {
		if sc.Status != StatusRecorded {
			return nil, fmt.Errorf("scenario %s/%s has status %q: a baseline is made by 'vk-cri compare record'", sc.Category, sc.Name, sc.Status)
		}
		out[sc.Category+"/"+sc.Name] = sc
	}
	return out, nil
}

// recordScenario runs sc on node B alone, runs more times for the deletion spread, and keeps
// the last run's record.
func (r *Runner) recordScenario(ctx context.Context, sc *Scenario, runs int) *ScenarioResult {
	var earlier []Attempt
	var res *ScenarioResult
	for n := 0; n < max(runs, 1) && ctx.Err() == nil; n++ {
		if res != nil {
			earlier = append(earlier, Attempt{Status: StatusRecorded, Seconds: res.Seconds, Diffs: []Diff{}, ErrorB: res.B.errorText(), DeletionsB: goneDeletions(res.B)})
		}
		res = r.runSides(ctx, sc, false, true)
		res.Status = StatusRecorded
		res.Diffs = []Diff{}
		if res.B.Error != "" {
			res.Status = StatusError
			break
		}
	}
	res.EarlierAttempts = earlier
	return res
}

// againstBaseline runs sc on node A alone and compares its record with the baseline's.
func (r *Runner) againstBaseline(ctx context.Context, sc *Scenario) *ScenarioResult {
	rec, ok := r.Baseline[sc.ID()]
	if !ok {
		msg := "not in the baseline"
		return &ScenarioResult{Name: sc.Name, Category: sc.Category, File: sc.File, Description: sc.Description, Known: sc.Known, Digest: sc.Digest,
			Status: StatusError, Diffs: []Diff{}, A: &SideRecord{Error: msg}, B: &SideRecord{Error: msg}}
	}
	if rec.Digest != "" && rec.Digest != sc.Digest {
		msg := "the baseline was recorded from another version of " + sc.File + ": record it again"
		return &ScenarioResult{Name: sc.Name, Category: sc.Category, File: sc.File, Description: sc.Description, Known: sc.Known, Digest: sc.Digest,
			Status: StatusError, Diffs: []Diff{}, A: &SideRecord{Error: msg}, B: &SideRecord{Error: msg}}
	}
	res := r.runSides(ctx, sc, true, false)
	res.B = rec.B
	res.DecideWith(sc.Compare, historyOf(rec.EarlierAttempts))
	return res
}

// runSides runs sc on the nodes asked for (at the same moment when both) and normalises their
// records; it does not compare them.
func (r *Runner) runSides(ctx context.Context, sc *Scenario, runA, runB bool) *ScenarioResult {
	start := time.Now()
	log := r.log().WithField("scenario", sc.ID())
	log.Info("running")
	res := &ScenarioResult{Name: sc.Name, Category: sc.Category, File: sc.File, Description: sc.Description, Known: sc.Known, Digest: sc.Digest}
	bar := newBarrier()
	var sides []*side
	vol := Volatile{Registry: r.ImageRegistry}
	for i, on := range []bool{runA, runB} {
		node := []string{r.NodeA, r.NodeB}[i]
		if !on {
			bar.arrive(i) // nobody to wait for
			continue
		}
		sides = append(sides, r.newSide(sc, i, node, log))
		vol.Nodes = append(vol.Nodes, node)
	}
	done := make(chan struct{}, len(sides))
	for _, s := range sides {
		go func() {
			defer func() { done <- struct{}{} }()
			s.run(ctx, bar)
		}()
	}
	for range sides {
		<-done
	}
	// Normalise every record with everything volatile from every side run, so that
	// normalisation is the same for A and B.
	for _, s := range sides {
		vol.Namespaces = append(vol.Namespaces, s.ns)
		vol.UIDs = append(vol.UIDs, s.uids...)
	}
	for _, s := range sides {
		NormalizeRecord(s.rec, vol)
		if s.idx == 0 {
			res.A = s.rec
		} else {
			res.B = s.rec
		}
	}
	res.Seconds = roundSeconds(time.Since(start))
	log.WithFields(logrus.Fields{"seconds": res.Seconds}).Debug("sides ran")
	return res
}
