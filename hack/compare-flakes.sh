#!/usr/bin/env bash
# Flake measurement: runs the compare corpus's matching scenarios RUNS times (default 5) on a
# fresh vk-cri node and on the reference kubelet node, like hack/compare-ci.sh but with
# --retries 0 so that every difference shows, then prints the flake table (bin/vk-cri compare
# flakes): per scenario that differed, in how many runs, at which paths, and which node's value
# moved between runs. The table is Markdown for test/compare/README.md.
#
#   hack/compare-flakes.sh [RUNS]
#   COMPARE_FLAKES_DIR=DIR   where the runs' JSON results go (default _output/compare-flakes;
#                            emptied first)
#   COMPARE_VK_NODE, COMPARE_VK_PORT, COMPARE_PARALLEL as for hack/compare-ci.sh.
#
# Needs the local stack (hack/stack-up.sh) and bin/vk-cri (make build). One run takes about as
# long as the compare phase of make test (7 minutes or more on 2 cores).
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"

RUNS=${1:-5}
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || die "usage: $0 [RUNS] (a positive number, got '$RUNS')"
NODE=${COMPARE_VK_NODE:-vk-cmp}
PORT=${COMPARE_VK_PORT:-10275}
OUT_DIR=${COMPARE_FLAKES_DIR:-$REPO_DIR/_output/compare-flakes}
[[ -f "$STACK_DIR/env" ]] || die "no $STACK_DIR/env: bring the stack up first (hack/stack-up.sh)"
[[ -x "$REPO_DIR/bin/vk-cri" ]] || die "no bin/vk-cri: run make build"
set -a; source "$STACK_DIR/env"; set +a

ref_was_up=0
"$HACK_DIR/ref.sh" status >/dev/null 2>&1 && ref_was_up=1
cleanup() {
  "$HACK_DIR/node.sh" remove "$NODE" >/dev/null 2>&1 || true
  if (( ref_was_up == 0 )); then "$HACK_DIR/ref.sh" down >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT

(( ref_was_up )) || "$HACK_DIR/ref.sh" up
"$HACK_DIR/node.sh" remove "$NODE" >/dev/null 2>&1 || true
"$HACK_DIR/node.sh" start "$NODE" "$PORT"
"$HACK_DIR/node.sh" wait-ready "$NODE"

rm -rf "$OUT_DIR"
mkdir -p "$OUT_DIR"
for i in $(seq 1 "$RUNS"); do
  log "run $i of $RUNS: the matching scenarios of test/compare on $NODE (vk-cri) and ref (kubelet), --retries 0"
  # A run that differs exits non-zero: that is what is being measured, so go on.
  phase "compare flakes run $i" "$REPO_DIR/bin/vk-cri" compare --kubeconfig "$KUBECONFIG" --node-a "$NODE" --node-b ref \
    --scenarios "$REPO_DIR/test/compare" --only-matching --parallel "${COMPARE_PARALLEL:-4}" --retries 0 \
    --out "$OUT_DIR/run-$i.json" >"$OUT_DIR/run-$i.log" 2>&1 || true
  [[ -s "$OUT_DIR/run-$i.json" ]] || die "run $i wrote no result (see $OUT_DIR/run-$i.log)"
  log "run $i: $(grep -m1 '^matching ' "$OUT_DIR/run-$i.log" || echo 'no score line')"
done

"$REPO_DIR/bin/vk-cri" compare flakes --scenarios "$REPO_DIR/test/compare" "$OUT_DIR"/run-*.json | tee "$OUT_DIR/table.md"
log "table written to $OUT_DIR/table.md; results and logs in $OUT_DIR"
