#!/usr/bin/env bash
# Runs the end-to-end tests: brings the local stack up when it is not, runs test/e2e (which
# starts its own vk-cri node), and takes down again whatever it brought up.
#
#   E2E_RUN=REGEXP      run only the matching tests (go test -run), skip the compare corpus and
#                       the disruption tests (which kill the shared containerd), and hold the stack
#                       lock shared, so that several such runs can share one stack. Give each its own
#                       node with VKCRI_E2E_NODE and VKCRI_E2E_PORT.
#   (no E2E_RUN)        the whole suite, then hack/compare-ci.sh; holds the stack lock exclusively.
#   E2E_SMOKE_1_6=1     (whole suite only; default 0) then, when both passed, restarts the "vk"
#                       containerd instance on the 1.6 lane (VKCRI_CONTAINERD=1.6, hack/containerd.sh),
#                       runs the smoke subset E2E_SMOKE_RUN on it, and puts the instance back on the
#                       lane it ran before. The suite itself runs on whatever lane the stack has
#                       (VKCRI_CONTAINERD, default 2).
#   E2E_RUNTIME=crio    the tests' node runs on a CRI-O instance "vk" (hack/crio.sh) started next
#                       to the stack, whatever runtime the stack itself runs (its env is the stack's
#                       with that instance's CRI_ENDPOINT, NODE_IP, POD_SUBNET: hack/crio.sh env).
#                       The instance is left running when it ran before, else stopped at the end.
#                       VKCRI_CRIO_RUN_DIR / VKCRI_CRIO_STORAGE_DIR place it (hack/crio.sh).
#   E2E_SMOKE_CRIO=1    (whole suite only; default 0) then, when the suite passed, runs the smoke
#                       subset E2E_SMOKE_CRIO_RUN on such a CRI-O instance; the stack is untouched.
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"

mkdir -p "$STACK_DIR"
exec 9>"$STACK_DIR/.e2e.lock"
if [[ -n "${E2E_RUN:-}" ]]; then
  flock -s 9
else
  log "waiting for other e2e runs on this stack to finish (exclusive lock)"
  flock -x 9
fi

was_up=0
stack_runtime=$(sed -n 's/^CONTAINER_RUNTIME=//p' "$STACK_DIR/env" 2>/dev/null || true)
if "$HACK_DIR/control-plane.sh" status >/dev/null 2>&1 \
   && "$(runtime_script "${stack_runtime:-containerd}")" status vk >/dev/null 2>&1; then
  was_up=1
fi
start=$SECONDS
# Children never get the lock's descriptor: a daemon started meanwhile (containerd restarted by
# the disruption tests, the registry, the control plane) would otherwise hold the lock forever.
phase "stack up" "$HACK_DIR/stack-up.sh" 9>&-
log "stack ready in $((SECONDS - start))s; running e2e tests"

run_args=()
if [[ -n "${E2E_RUN:-}" ]]; then
  run_args=(-run "$E2E_RUN" -skip 'Disruption')
fi

# The smoke subset of the 1.6 lane: start-up and node status, a pod's life, exec, logs, probes,
# security context.
E2E_SMOKE_RUN=${E2E_SMOKE_RUN:-'^(TestNodeRegistersReadyWithHostFacts|TestPodScheduledRunsAndAnswersHTTP|TestContainerExitCodesGivePhases|TestDeleteRemovesContainersAndSandbox|TestStreamExecExitCodesAndStdin|TestLogsFollow|TestProbeHandlersAndKinds|TestSecurityContextSeenFromInside)$'}

# The smoke subset on CRI-O: that of the 1.6 lane, plus what differs most between runtimes: an
# init container, volumes, attach and port-forward, runtime handlers, stats.
E2E_SMOKE_CRIO_RUN=${E2E_SMOKE_CRIO_RUN:-'^(TestNodeRegistersReadyWithHostFacts|TestPodScheduledRunsAndAnswersHTTP|TestContainerExitCodesGivePhases|TestDeleteRemovesContainersAndSandbox|TestLifecycleInitContainersRunInOrder|TestVolumeConfigMapFilesModesLayoutAndUpdate|TestVolumeEmptyDirDiskMemoryAndFSGroup|TestVolumeSecretOnTmpfs|TestProbeHandlersAndKinds|TestStreamExecExitCodesAndStdin|TestStreamAttach|TestStreamPortForward|TestLogsFollow|TestLogsOptions|TestSecurityContextSeenFromInside|TestRuntimesNodeReportsHandlersAndFeatures|TestRuntimeClassCrunRunsUnderCrun|TestStatsSummary|TestStatsCPUMatchesCgroup)$'}

# The env the tests read: the stack's, or that of the CRI-O instance (use_crio).
E2E_ENV="$STACK_DIR/env"
crio_started=0

# use_crio: starts CRI-O instance "vk" next to the stack (installed and built if missing) and
# points the tests at it.
use_crio() {
  if ! "$HACK_DIR/crio.sh" status vk >/dev/null 2>&1; then
    "$HACK_DIR/crio.sh" install vk 9>&-
    "$HACK_DIR/crio.sh" start vk 9>&-
    crio_started=1
  fi
  crio_instance vk
  E2E_ENV="$CRIO_DIR/e2e.env"
  "$HACK_DIR/crio.sh" env "$E2E_ENV" vk 9>&-
}

stop_crio() {
  if (( crio_started )); then "$HACK_DIR/crio.sh" stop vk 9>&- || true; fi
  crio_started=0
  E2E_ENV="$STACK_DIR/env"
}

run_e2e() {
  (cd "$REPO_DIR" && VKCRI_STACK_ENV="$E2E_ENV" VKCRI_BIN="$REPO_DIR/bin/vk-cri" \
    go test -tags e2e -count=1 -v -timeout "${E2E_TIMEOUT:-60m}" "$@" ./test/e2e/...) 9>&-
}

# stack_lane: the containerd lane of the running "vk" instance, as stack-up.sh recorded it.
stack_lane() { sed -n 's/^CONTAINERD_LANE=//p' "$STACK_DIR/env" 2>/dev/null; }

# switch_lane LANE: restarts the "vk" containerd instance on LANE (its pods are removed) and
# rewrites the stack env. Only with the exclusive lock: every node on the instance loses its pods.
switch_lane() {
  log "switching containerd (vk) from lane $(stack_lane) to lane $1"
  "$HACK_DIR/containerd.sh" stop vk 9>&-
  VKCRI_CONTAINERD=$1 "$HACK_DIR/stack-up.sh" 9>&-
}

# The reference kubelet node `ref` runs during the tests that check vk-cri against it live (the
# hostile kubelet API battery, the chart installed onto ref, the node identities); compare-ci.sh
# then finds it up, and the stack-down below stops it with the rest.
if [[ "${E2E_RUNTIME:-}" != crio ]] && ! "$HACK_DIR/ref.sh" status >/dev/null 2>&1; then
  phase "reference node up" "$HACK_DIR/ref.sh" up 9>&-
fi

rc=0
if [[ "${E2E_RUNTIME:-}" == crio ]]; then
  use_crio
  phase "e2e tests (CRI-O)" run_e2e "${run_args[@]}" || rc=$?
  stop_crio
else
  phase "e2e tests" run_e2e "${run_args[@]}" || rc=$?
fi

# Fidelity: the compare scenarios that match the upstream kubelet must keep matching.
if (( rc == 0 )) && [[ -z "${E2E_RUN:-}" ]]; then
  phase "compare" "$HACK_DIR/compare-ci.sh" 9>&- || rc=$?
fi

if (( rc == 0 )) && [[ -z "${E2E_RUN:-}" && "${E2E_SMOKE_1_6:-0}" == 1 ]]; then
  lane=$(stack_lane)
  if [[ "$lane" == 1.6 ]]; then
    log "the suite ran on the 1.6 lane already: no smoke run"
  else
    switch_lane 1.6 || rc=$?
    if (( rc == 0 )); then
      log "smoke subset on containerd lane 1.6: $E2E_SMOKE_RUN"
      phase "e2e smoke (containerd 1.6)" run_e2e -run "$E2E_SMOKE_RUN" || rc=$?
    fi
    # Leave the stack on the lane it had (stack-down below stops it anyway when it was not up).
    if (( was_up == 1 )); then switch_lane "${lane:-$VKCRI_CONTAINERD}" || rc=$?; fi
  fi
fi

if (( rc == 0 )) && [[ -z "${E2E_RUN:-}" && "${E2E_SMOKE_CRIO:-0}" == 1 ]]; then
  use_crio
  log "smoke subset on CRI-O: $E2E_SMOKE_CRIO_RUN"
  phase "e2e smoke (CRI-O)" run_e2e -run "$E2E_SMOKE_CRIO_RUN" || rc=$?
  stop_crio
fi

if (( was_up == 0 )) && [[ -z "${E2E_RUN:-}" ]]; then
  log "taking the stack down again (it was not up before)"
  phase "stack down" "$HACK_DIR/stack-down.sh" 9>&- || true
fi
log "e2e finished with exit code $rc after $((SECONDS - start))s"
exit $rc
