// Package compare runs behaviour scenarios on two nodes at once (typically a vk-cri node and a
// node run by the upstream kubelet), records what each node does in a normalised form and
// diffs the two records. `vk-cri compare` is its command line.
//
// # Running a scenario
//
// Each scenario runs on both nodes at the same time, each side in a fresh namespace
// (cmp-<scenario>-a-<rand> and cmp-<scenario>-b-<rand>) with its pods pinned to its node with
// spec.nodeName. A side creates its namespace, starts watching the namespace's pods and events,
// creates the scenario's objects, waits for the namespace's default ServiceAccount, waits for
// the other side to be as far (so that both create their pods at the same moment), creates the
// pods in order and runs the steps. Then it waits (until the scenario's deadline) for the pods
// it deleted to be gone, stops the timelines, reads the logs, gives events --settle to arrive,
// collects them, and deletes its namespace without waiting.
//
// The scenario's timeout covers everything up to the end of the steps; a step that would start
// after it is recorded as "skipped: scenario timeout". A wait that times out is recorded as
// "wait timed out: <for>" and the scenario goes on. A wait that can no longer succeed ends at
// once as "wait impossible: <for> (<why>)": the pod was deleted, was not created, or is in a
// terminal phase other than the one waited for.
//
// # The record
//
// Per pod (see PodRecord): the timeline of distinct consecutive normalised statuses seen by the
// watch (NormalizePod), each with how long it was visible in the API (durations.go), the events (type, reason, involved fieldPath, with counts; those first
// seen before the collection started, and all those of a pod gone from the API), the logs of each init and regular container (the
// previous ones too when it restarted; read just before a delete step for deleted pods) and,
// for deleted pods, the deletion time from the delete call to the pod gone from the API. Per
// step (see StepRecord): its outcome, and for exec steps stdout, stderr, exit code or the error.
// Every text is normalised (NormalizeText) with the volatile strings of both sides.
//
// # Comparing
//
// DiffSides compares the two records: step outcomes, exec results and logs exactly; events as
// a set of (type, reason, fieldPath) present on a side, or with their counts when the scenario
// sets compare.eventCounts; deletion times as a behaviour part (how long the containers took to
// stop: preStop, SIGTERM, the grace period) plus a cadence part (the node's sync loop), so that
// they match when they differ by at most DeletionEnvelope, the relist waits the kubelet's
// deletion path makes (two relist intervals, 2.5 s), and, when the scenario is run again, when
// A's time lies within that envelope of the range of B's (the reference's) times over the runs
// (see deletion.go); timelines as described in timeline.go (after collapsing repeats:
// the same final state, and either one a subsequence of the other or both skipping different
// states of one progression; when both pods end Succeeded or Failed, their terminal states'
// PodReadyToStartContainers is left out, and so is that condition in the snapshots while the
// pod's first sandbox starts, two races in the kubelet: see readyToStartRaces); how long
// the states were visible as described in durations.go (a state B showed for more than 5 s
// that A showed for less than 0.75 s, or not at all, while A held on to the state before it for
// 2.5 s longer than B, differs). Diff
// paths look like
// "pods/main/timeline[3].containers[web].state", "pods/main/timeline[4].visible",
// "pods/main/events[Warning BackOff
// spec.containers{c}]", "pods/main/logs[c].current", "steps[2].exec", "pods/main/deletion".
//
// # Scenario files
//
// The format is documented in test/compare/README.md; scenario_parse.go implements it
// (types in scenario.go, loading in scenario_load.go, step checks in scenario_validate.go,
// `for:` in waitfor.go, decoding errors in jsonerror.go). Additions
// to it, all optional:
//
//   - compare.eventCounts (bool): compare event counts, not only presence.
//   - compare.ignore (list of path patterns, "*" matches anything): leave those diff paths out
//     of the comparison, e.g. "pods/main/timeline[*].containers[c].restartCount".
//   - exec.timeout (duration, default 30s) and an exec without container (the pod's first).
//   - a wait without timeout waits up to 60s (and never past the scenario's deadline).
//   - durations may also be bare numbers of seconds.
//
// Files and directories whose name starts with "." or "_" are not loaded.
package compare
