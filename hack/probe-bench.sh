#!/usr/bin/env bash
# make bench-probes: probe scheduling lag (p99) and agent CPU for PODS pods × 3 probes (startup,
# readiness, liveness; httpGet) at a 1 s period on one vk-cri node of the local stack.
#   - builds bin/vk-cri and bin/probebench;
#   - starts its own node PROBE_BENCH_NODE (default vk-probe-bench) on port PROBE_BENCH_PORT
#     (default 10265), runs bin/probebench against it, removes the node even on failure.
# Environment: PODS (default 100), WINDOW (default 60s), PROBE_BENCH_ARGS (extra flags).
# Prints figures; asserts nothing.
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"

NODE=${PROBE_BENCH_NODE:-vk-probe-bench}
PORT=${PROBE_BENCH_PORT:-10265}
cd "$REPO_DIR"
make --no-print-directory build
go build -o bin/probebench ./hack/probebench
"$HACK_DIR/stack-up.sh" >/dev/null
trap '"$HACK_DIR/node.sh" remove "$NODE" >/dev/null 2>&1 || true' EXIT
"$HACK_DIR/node.sh" start "$NODE" "$PORT"
"$HACK_DIR/node.sh" wait-ready "$NODE"
# shellcheck disable=SC2086
bin/probebench --stack-env "$STACK_DIR/env" --node "$NODE" --pods "${PODS:-100}" --window "${WINDOW:-60s}" ${PROBE_BENCH_ARGS:-}
