#!/usr/bin/env bash
# Runs the end-to-end tests: brings the local stack up when it is not, runs test/e2e (which
# starts its own vk-cri node), and takes down again whatever it brought up.
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"

was_up=0
if "$HACK_DIR/control-plane.sh" status >/dev/null 2>&1 && "$HACK_DIR/containerd.sh" status vk >/dev/null 2>&1; then
  was_up=1
fi
start=$SECONDS
"$HACK_DIR/stack-up.sh"
log "stack ready in $((SECONDS - start))s; running e2e tests"

rc=0
(cd "$REPO_DIR" && VKCRI_STACK_ENV="$STACK_DIR/env" VKCRI_BIN="$REPO_DIR/bin/vk-cri" \
  go test -tags e2e -count=1 -v -timeout "${E2E_TIMEOUT:-40m}" ./test/e2e/...) || rc=$?

# Fidelity: the compare scenarios that match the upstream kubelet must keep matching.
if (( rc == 0 )); then
  "$HACK_DIR/compare-ci.sh" || rc=$?
fi

if (( was_up == 0 )); then
  log "taking the stack down again (it was not up before)"
  "$HACK_DIR/stack-down.sh" || true
fi
log "e2e finished with exit code $rc after $((SECONDS - start))s"
exit $rc
