#!/usr/bin/env bash
# Phase times of a make test run (hack/lib/common.sh: phase, phase_begin/phase_end,
# run_with_progress record them in $PHASES_FILE, default _output/phases.tsv).
#
#   hack/phases.sh reset             forget the phases recorded so far
#   hack/phases.sh run NAME CMD...   run CMD as the phase NAME, return its exit status
#   hack/phases.sh summary           print the phases in the order they started, nested ones
#                                    indented under the phase that ran them, and the total
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"

summary() {
  if [[ ! -s "$PHASES_FILE" ]]; then
    echo "no phase times recorded ($PHASES_FILE)"
    return 0
  fi
  echo "phase times (nested phases are part of the one above them):"
  # Fields: NAME SECONDS EXIT START_MS PARENT. Sorted by start; a parent starts before its
  # children (ties: the longer phase, the parent, first).
  sort -t $'\t' -k4,4n -k2,2nr "$PHASES_FILE" | awk -F'\t' '
    function dur(s) { s = int(s + 0.5); return s >= 60 ? sprintf("%dm%02ds", int(s / 60), s % 60) : sprintf("%ds", s) }
    function pad(s, n) { while (length(s) < n) s = s " "; return s }
    {
      depth = ($5 == "") ? 0 : split($5, parts, " > ")
      status = ($3 == 0) ? "" : sprintf("  FAILED (exit %d)", $3)
      printf "%s %8s%s\n", pad(pad("", 2 + 2 * depth) $1, 62), dur($2), status
      if (depth == 0) total += $2
    }
    END { printf "%s %8s\n", pad("  total of the top-level phases", 62), dur(total) }'
}

case "${1:-}" in
  reset) rm -f "$PHASES_FILE" ;;
  run)
    shift
    (( $# >= 2 )) || { echo "usage: $0 run NAME COMMAND..." >&2; exit 2; }
    phase "$@"
    ;;
  summary) summary ;;
  *) echo "usage: $0 reset|run NAME COMMAND...|summary" >&2; exit 2 ;;
esac
