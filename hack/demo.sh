#!/usr/bin/env bash
# make demo / make demo-down: the local stack, a vk-cri node named vk-demo and example pods.
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"

NODE=vk-demo

up() {
  local start=$SECONDS
  "$HACK_DIR/stack-up.sh"
  set -a; source "$STACK_DIR/env"; set +a
  "$HACK_DIR/node.sh" start "$NODE"
  "$HACK_DIR/node.sh" wait-ready "$NODE"
  local k=("$KUBECTL" --kubeconfig "$KUBECONFIG")
  # Fresh example pods each time, so that the latencies below are those of this run (the
  # control plane keeps its data between runs).
  "${k[@]}" delete -f "$REPO_DIR/examples/demo.yaml" --ignore-not-found --wait=true --timeout=60s >/dev/null
  "${k[@]}" delete pods -l 'app in (hello,ticker)' --ignore-not-found --wait=true --timeout=60s >/dev/null
  log "applying examples/demo.yaml"
  "${k[@]}" apply -f "$REPO_DIR/examples/demo.yaml" >/dev/null
  "${k[@]}" rollout status deploy/hello deploy/ticker --timeout=180s >/dev/null \
    || { "${k[@]}" get pods -o wide; die "example pods did not become ready"; }
  log "example pods running; the whole demo was up in $((SECONDS - start))s"
  echo
  "${k[@]}" get nodes -o wide
  echo
  "${k[@]}" get pods -o wide
  echo
  echo "Create → Ready latency of the example pods (API timestamps, 1 s resolution):"
  "${k[@]}" get pods -o go-template='{{range .items}}{{if not .metadata.deletionTimestamp}}{{.metadata.name}} {{.metadata.creationTimestamp}} {{range .status.conditions}}{{if eq .type "Ready"}}{{.lastTransitionTime}}{{end}}{{end}}{{"\n"}}{{end}}{{end}}' |
    while read -r name created ready; do
      [[ -n "$ready" ]] || continue
      echo "  $name: $(( $(date -d "$ready" +%s) - $(date -d "$created" +%s) ))s"
    done
  local ip; ip=$("${k[@]}" get pods -l app=hello -o jsonpath='{.items[0].status.podIP}')
  cat <<TXT

The vk-cri node "$NODE" runs these pods on containerd ($CRI_ENDPOINT).
Its log: $STACK_DIR/logs/vk-cri-$NODE.log

Things to try:
  kubectl get pods -o wide
  kubectl describe pod -l app=hello
  curl http://$ip:8080/                      # a pod IP answers from the host
  kubectl logs deploy/ticker                  # container logs through the kubelet API
  kubectl scale deploy/hello --replicas=5
  kubectl delete pod -l app=hello             # the Deployment replaces them
  kubectl run once --image=$REGISTRY/vk-cri/busybox:latest --restart=Never --overrides='{"spec":{"automountServiceAccountToken":false}}' -- sh -c 'echo done; exit 3'
  kubectl get pod once -o jsonpath='{.status.phase} {.status.containerStatuses[0].state.terminated.exitCode}{"\n"}'
  $CRICTL --runtime-endpoint $CRI_ENDPOINT ps     # what containerd runs
  make demo-down                              # stops everything

To reach the cluster from your shell, paste:
export KUBECONFIG=$KUBECONFIG
export PATH=$BIN_DIR:\$PATH
TXT
}

down() {
  if [[ -f "$STACK_DIR/env" ]]; then
    set -a; source "$STACK_DIR/env"; set +a
    "$KUBECTL" --kubeconfig "$KUBECONFIG" delete -f "$REPO_DIR/examples/demo.yaml" --ignore-not-found \
      --wait=true --timeout=60s >/dev/null 2>&1 || true
    "$HACK_DIR/node.sh" remove "$NODE" || true
  fi
  "$HACK_DIR/stack-down.sh"
}

case "${1:-up}" in
  up) up ;;
  down) down ;;
  *) die "usage: demo.sh up|down" ;;
esac
