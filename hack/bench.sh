#!/usr/bin/env bash
# make bench: measures a vk-cri node next to the reference kubelet node "ref" (when hack/ref.sh
# exists) on the local stack, and the runtime floor (CRI calls made directly).
#   - builds bin/vk-cri (make build) and bin/bench;
#   - brings the stack up if it is not (never takes it down: it is shared);
#   - starts its own vk-cri node vk-bench (kubelet API port 10273) and the ref node (hack/ref.sh up);
#   - runs bin/bench, which prints the table and writes JSON to $BENCH_OUT;
#   - removes the vk-bench node, even on failure. The ref node is left running like the stack (other
#     engineers' tools use it too), unless BENCH_REF_DOWN=1 and this script started it.
# Environment: BENCH_OUT (default bin/bench-results.json), BENCH_ARGS (extra bin/bench flags),
# BENCH_DEADLINE (bin/bench --deadline, default 11m), BENCH_TIMEOUT (hard limit, default 14m),
# BENCH_REF_DOWN=1.
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"

BENCH_NODE=vk-bench
BENCH_PORT=10273
BENCH_OUT=${BENCH_OUT:-$REPO_DIR/bin/bench-results.json}
# The measurements stop after this (bin/bench --deadline), clean-up follows; the whole run is
# also killed after BENCH_TIMEOUT.
BENCH_DEADLINE=${BENCH_DEADLINE:-11m}
BENCH_TIMEOUT=${BENCH_TIMEOUT:-14m}
start=$SECONDS

cd "$REPO_DIR"
log "building bin/vk-cri and bin/bench"
make --no-print-directory build
go build -o bin/bench ./hack/bench

if ! { "$HACK_DIR/control-plane.sh" status >/dev/null 2>&1 && "$HACK_DIR/containerd.sh" status vk >/dev/null 2>&1 \
       && [[ -f "$STACK_DIR/env" ]]; }; then
  log "the local stack is not up: bringing it up (it is left running)"
  "$HACK_DIR/stack-up.sh"
fi
ENV_FILE="$STACK_DIR/env"
set -a; source "$ENV_FILE"; set +a

ref_started=0
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  log "bench clean-up"
  # Leftovers of a bench that was killed before its own clean-up (namespaces, floor sandboxes).
  if [[ -x bin/bench ]]; then timeout 4m bin/bench --env "$ENV_FILE" --cleanup-only || true; fi
  "$HACK_DIR/node.sh" remove "$BENCH_NODE" || true
  if (( ref_started )) && [[ "${BENCH_REF_DOWN:-0}" == 1 ]]; then
    log "stopping the ref node this bench started"
    "$HACK_DIR/ref.sh" down || true
  fi
  log "bench finished (exit $rc) after $((SECONDS - start))s"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ref_ready() {
  [[ "$("$KUBECTL" --kubeconfig "$KUBECONFIG" get node ref \
        -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" == True ]]
}

# A node left over from an interrupted run starts afresh.
"$HACK_DIR/node.sh" remove "$BENCH_NODE" >/dev/null 2>&1 || true
"$HACK_DIR/node.sh" start "$BENCH_NODE" "$BENCH_PORT"
TIMEOUT=90 "$HACK_DIR/node.sh" wait-ready "$BENCH_NODE"

if [[ -x "$HACK_DIR/ref.sh" ]]; then
  if ref_ready; then
    log "ref node already Ready"
  else
    log "starting the reference kubelet node (hack/ref.sh up)"
    ref_started=1
    "$HACK_DIR/ref.sh" up || log "hack/ref.sh up failed: the kubelet column will be skipped"
    wait_for "node ref to be Ready" 90 ref_ready || log "node ref is not Ready: the kubelet column will be skipped"
  fi
else
  log "hack/ref.sh does not exist yet: bin/bench will skip the ref node unless it is Ready"
fi

mkdir -p "$(dirname "$BENCH_OUT")"
# --foreground: bin/bench stays in the terminal's process group, so Ctrl-C reaches it and it
# cleans up; bash runs its own traps once bin/bench has returned.
# shellcheck disable=SC2086 # BENCH_ARGS is a list of flags.
timeout --foreground --signal=TERM --kill-after=60s "$BENCH_TIMEOUT" \
  bin/bench --env "$ENV_FILE" --vk-node "$BENCH_NODE" --ref-node ref --deadline "$BENCH_DEADLINE" \
  --out "$BENCH_OUT" ${BENCH_ARGS:-}
