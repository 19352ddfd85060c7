#!/usr/bin/env bash
# hack/bench-resize.sh NODE: in-place resize latency on a node: from the resize request (the
# pod's resize subresource, cpu 100m <-> 200m, alternately) to the pod's status, seen through a
# watch, showing the container running with the new cpu limit and no PodResizeInProgress
# condition. TRIALS resizes (default 20) of one Guaranteed busybox pod pinned to NODE. Works for
# a vk-cri node and for `ref`. Prints p50, p90 and max; asserts nothing.
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"

NODE=${1:?usage: hack/bench-resize.sh NODE}
TRIALS=${TRIALS:-20}
set -a
# shellcheck disable=SC1091
source "$STACK_DIR/env"
set +a
k() { "$KUBECTL" --kubeconfig "$KUBECONFIG" "$@"; }

ns=bench-resize-$RANDOM
work=$(mktemp -d)
watcher=
cleanup() {
  [[ -n "$watcher" ]] && kill "$watcher" 2>/dev/null || true
  k delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
k create namespace "$ns" >/dev/null
k -n "$ns" apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: resized}
spec:
  nodeName: $NODE
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 1
  tolerations: [{operator: Exists}]
  containers:
  - name: c
    image: $REGISTRY/vk-cri/busybox:latest
    command: [sh, -c, "trap 'exit 0' TERM; sleep 3600 & wait"]
    resources:
      limits: {cpu: 100m, memory: 64Mi}
YAML
k -n "$ns" wait --for=condition=Ready pod/resized --timeout=120s >/dev/null

# One watch for the whole run; every status it delivers is stamped on arrival.
k -n "$ns" get pod resized -w -o jsonpath='{.metadata.generation} {.status.observedGeneration} {.status.containerStatuses[0].resources.limits.cpu} {.status.conditions[*].type}{"\n"}' |
  while IFS= read -r line; do echo "$(date +%s%N) $line"; done >"$work/watch" &
watcher=$!
sleep 1

lat=()
for i in $(seq 1 "$TRIALS"); do
  cpu=200m
  (( i % 2 == 0 )) && cpu=100m
  gen=$((i + 1))
  start=$(date +%s%N)
  k -n "$ns" patch pod resized --subresource resize \
    -p "{\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"$cpu\"},\"limits\":{\"cpu\":\"$cpu\"}}}]}}" >/dev/null
  done_at=
  for _ in $(seq 1 600); do
    done_at=$(awk -v s="$start" -v g="$gen" -v c="$cpu" '$1 >= s && $2 == g && $3 == g && $4 == c && !/PodResizeInProgress|PodResizePending/ { print $1; exit }' "$work/watch")
    [[ -n "$done_at" ]] && break
    sleep 0.05
  done
  [[ -n "$done_at" ]] || die "resize $i (to $cpu) not seen done within 30 s on $NODE"
  lat+=($(( (done_at - start) / 1000000 )))
done

printf '%s\n' "${lat[@]}" | sort -n | awk -v node="$NODE" -v n="$TRIALS" '
  { v[NR] = $1 }
  END {
    p50 = v[int((NR + 1) * 0.5)]; p90 = v[int(NR * 0.9 + 0.5)]
    printf "node %s: %d in-place resizes, request -> status done (watch): p50 %d ms, p90 %d ms, max %d ms\n", node, n, p50, p90, v[NR]
  }'
