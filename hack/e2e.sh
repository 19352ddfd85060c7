#!/usr/bin/env bash
# Runs the end-to-end tests: brings the local stack up when it is not, runs test/e2e (which
# starts its own vk-cri node), and takes down again whatever it brought up.
#
#   E2E_RUN=REGEXP      run only the matching tests (go test -run), skip the compare corpus and
#                       the disruption tests (which kill the shared containerd), and hold the stack
#                       lock shared, so that several such runs can share one stack. Give each its own
#                       node with VKCRI_E2E_NODE and VKCRI_E2E_PORT.
#   (no E2E_RUN)        the whole suite, then hack/compare-ci.sh; holds the stack lock exclusively.
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
if "$HACK_DIR/control-plane.sh" status >/dev/null 2>&1 && "$HACK_DIR/containerd.sh" status vk >/dev/null 2>&1; then
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

rc=0
(cd "$REPO_DIR" && VKCRI_STACK_ENV="$STACK_DIR/env" VKCRI_BIN="$REPO_DIR/bin/vk-cri" \
  phase "e2e tests" go test -tags e2e -count=1 -v -timeout "${E2E_TIMEOUT:-40m}" "${run_args[@]}" ./test/e2e/...) 9>&- || rc=$?

# Fidelity: the compare scenarios that match the upstream kubelet must keep matching.
if (( rc == 0 )) && [[ -z "${E2E_RUN:-}" ]]; then
  phase "compare" "$HACK_DIR/compare-ci.sh" 9>&- || rc=$?
fi

if (( was_up == 0 )) && [[ -z "${E2E_RUN:-}" ]]; then
  log "taking the stack down again (it was not up before)"
  phase "stack down" "$HACK_DIR/stack-down.sh" 9>&- || true
fi
log "e2e finished with exit code $rc after $((SECONDS - start))s"
exit $rc
