#!/usr/bin/env bash
# Fidelity check for `make test`: runs the compare corpus's scenarios that are not marked known
# on a fresh vk-cri node and on the reference kubelet node at the same time, and fails when one
# of them differs. Brings the reference node up if needed and down again if it did.
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"

NODE=${COMPARE_VK_NODE:-vk-cmp}
PORT=${COMPARE_VK_PORT:-10275}
set -a; source "$STACK_DIR/env"; set +a

ref_was_up=0
"$HACK_DIR/ref.sh" status >/dev/null 2>&1 && ref_was_up=1
cleanup() {
  "$HACK_DIR/node.sh" remove "$NODE" >/dev/null 2>&1 || true
  if (( ref_was_up == 0 )); then "$HACK_DIR/ref.sh" down >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT

(( ref_was_up )) || phase "reference node up" "$HACK_DIR/ref.sh" up
"$HACK_DIR/node.sh" remove "$NODE" >/dev/null 2>&1 || true
"$HACK_DIR/node.sh" start "$NODE" "$PORT"
"$HACK_DIR/node.sh" wait-ready "$NODE"

mkdir -p "$REPO_DIR/_output"
log "comparing the matching scenarios of test/compare on $NODE (vk-cri) and ref (kubelet)"
phase "compare corpus" "$REPO_DIR/bin/vk-cri" compare --kubeconfig "$KUBECONFIG" --node-a "$NODE" --node-b ref \
  --scenarios "$REPO_DIR/test/compare" --only-matching --parallel "${COMPARE_PARALLEL:-4}" \
  --retries "${COMPARE_RETRIES:-1}" \
  --out "$REPO_DIR/_output/compare-matching.json"
