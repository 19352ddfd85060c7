#!/usr/bin/env bash
# hack/bench-object-reads.sh NODE: how often a node's agent reads ConfigMaps and Secrets from the
# API server while containers restart. PODS pods (default 6) pinned to NODE crash-loop, each
# container getting env from one ConfigMap key and one Secret key; over WINDOW seconds (default
# 75) it counts their container starts and the API server's GETs of ConfigMaps and Secrets
# (apiserver_request_total: cluster-wide, so other clients' GETs count too; run it on a quiet
# stack). Works for a vk-cri node and for `ref`. Prints figures; asserts nothing.
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"

NODE=${1:?usage: hack/bench-object-reads.sh NODE}
PODS=${PODS:-6}
WINDOW=${WINDOW:-75}
set -a
# shellcheck disable=SC1091
source "$STACK_DIR/env"
set +a
k() { "$KUBECTL" --kubeconfig "$KUBECONFIG" "$@"; }
gets() {
  k get --raw /metrics | awk '/^apiserver_request_total\{/ && /verb="GET"/ && /scope="resource"/ &&
    (/resource="configmaps"/ || /resource="secrets"/) { s += $2 } END { print s + 0 }'
}

ns=bench-object-reads-$RANDOM
k create namespace "$ns" >/dev/null
trap 'k delete namespace "$ns" --wait=false >/dev/null 2>&1 || true' EXIT
k -n "$ns" create configmap cfg --from-literal=color=blue >/dev/null
k -n "$ns" create secret generic sec --from-literal=pw=x >/dev/null
for i in $(seq 1 "$PODS"); do
  cat <<YAML
apiVersion: v1
kind: Pod
metadata: {name: loop-$i}
spec:
  nodeName: $NODE
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 1
  tolerations: [{operator: Exists}]
  containers:
  - name: c
    image: $REGISTRY/vk-cri/busybox:latest
    command: [sh, -c, 'echo \$COLOR \$PW; exit 1']
    env:
    - {name: COLOR, valueFrom: {configMapKeyRef: {name: cfg, key: color}}}
    - {name: PW, valueFrom: {secretKeyRef: {name: sec, key: pw}}}
---
YAML
done | k -n "$ns" create -f - >/dev/null
before=$(gets)
sleep "$WINDOW"
after=$(gets)
starts=$(k -n "$ns" get pods -o jsonpath='{range .items[*]}{.status.containerStatuses[0].restartCount}{"\n"}{end}' |
  awk '{ s += $1 + 1 } END { print s + 0 }')
echo "node $NODE: $PODS crash-looping pods, ${WINDOW}s: $starts container starts, $((after - before)) ConfigMap/Secret GETs"
