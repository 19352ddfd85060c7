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
out="$REPO_DIR/_output"
rc=0
phase "compare corpus" "$REPO_DIR/bin/vk-cri" compare --kubeconfig "$KUBECONFIG" --node-a "$NODE" --node-b ref \
  --scenarios "$REPO_DIR/test/compare" --only-matching --parallel "${COMPARE_PARALLEL:-4}" \
  --retries "${COMPARE_RETRIES:-1}" \
  --out "$out/compare-matching.json" --html "$out/compare-report.html" --junit "$out/compare-junit.xml" || rc=$?

# The report of this very run, rendered by a real browser, must show the JSON's score and counts
# (compare/htmlreport_chromium_test.go). Exit 2 from compare (could not compare) may leave no
# result to render.
if [[ -s "$out/compare-matching.json" && -s "$out/compare-report.html" ]]; then
  ensure_apt_packages chromium-headless-shell
  phase "compare report in headless Chromium" env VKCRI_CHROMIUM_REQUIRED=1 \
    VKCRI_REPORT_JSON="$out/compare-matching.json" VKCRI_REPORT_HTML="$out/compare-report.html" \
    "${GO:-go}" test -count=1 -run '^TestHTMLReportRendersInChromium$' "$REPO_DIR/compare"
fi

# The same node against the baseline of the kubelet shipped in the repo (no reference node): a
# part of the corpus must get the live run's verdicts (compare/baseline_live_test.go).
baseline=${COMPARE_BASELINE:-$REPO_DIR/test/compare/baselines/kubelet-v1.37.2.json}
if (( rc == 0 )) && [[ -f "$baseline" ]]; then
  phase "compare against the shipped baseline" "$REPO_DIR/bin/vk-cri" compare --kubeconfig "$KUBECONFIG" \
    --node-a "$NODE" --baseline "$baseline" --scenarios "$REPO_DIR/test/compare" --only-matching \
    --run "${COMPARE_BASELINE_RUN:-^(lifecycle|probes|volumes|hooks|termination|env|security|failures)/[a-c]}" \
    --parallel "${COMPARE_PARALLEL:-4}" --retries "${COMPARE_RETRIES:-1}" --out "$out/compare-baseline.json" || rc=$?
  if [[ -s "$out/compare-baseline.json" ]]; then
    phase "baseline verdicts = live verdicts" env VKCRI_LIVE_RESULT="$out/compare-matching.json" \
      VKCRI_BASELINE_RESULT="$out/compare-baseline.json" \
      "${GO:-go}" test -count=1 -run '^TestBaselineVerdictsAgreeWithTheLiveRun$' "$REPO_DIR/compare" || rc=$?
  fi
fi
exit "$rc"
