#!/usr/bin/env bash
# metrics-server v0.8.0 on the local stack, registered as the metrics.k8s.io APIService, so that
# `kubectl top node|pod` shows the nodes' figures. Not part of stack-up: the tests that need it
# start it (a host process; no cluster networking on this stack).
#
#   hack/metrics-server.sh up       build (cached), certificates, RBAC, APIService; start; wait Available
#   hack/metrics-server.sh down     stop it and remove the APIService
#   hack/metrics-server.sh status   exit 0 iff running
#
# The API server reaches it through an ExternalName Service pointing at NODE_IP, verifying its
# certificate (metrics-server.kube-system.svc, signed by the cluster CA) with the APIService's
# caBundle. It verifies the kubelets' serving certificates against the cluster CA (no
# --kubelet-insecure-tls) and authenticates to them with its client certificate.
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"

METRICS_SERVER_VERSION=${METRICS_SERVER_VERSION:-v0.8.0}
METRICS_SERVER_PORT=${METRICS_SERVER_PORT:-4443}
ENV_FILE="$STACK_DIR/env"
[[ -f "$ENV_FILE" ]] || die "no $ENV_FILE: run hack/stack-up.sh first"
set -a; source "$ENV_FILE"; set +a

bin="$CACHE_DIR/bin/metrics-server-$METRICS_SERVER_VERSION"
pidfile="$STACK_DIR/metrics-server.pid"
logfile="$LOG_DIR/metrics-server.log"
kc=("$KUBECTL" --kubeconfig "$KUBECONFIG")

running() { [[ -f "$pidfile" ]] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

available() {
  [[ "$("${kc[@]}" get apiservice v1beta1.metrics.k8s.io \
        -o jsonpath='{.status.conditions[?(@.type=="Available")].status}' 2>/dev/null)" == True ]]
}

register() {
  "${kc[@]}" apply -f "$HACK_DIR/metrics-server/rbac.yaml" >/dev/null
  "${kc[@]}" apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Service
metadata:
  name: metrics-server
  namespace: kube-system
spec:
  type: ExternalName
  externalName: $NODE_IP
  ports:
  - {name: https, port: $METRICS_SERVER_PORT, protocol: TCP}
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1beta1.metrics.k8s.io
spec:
  group: metrics.k8s.io
  version: v1beta1
  groupPriorityMinimum: 100
  versionPriority: 100
  service: {name: metrics-server, namespace: kube-system, port: $METRICS_SERVER_PORT}
  caBundle: $(base64 -w0 "$PKI_DIR/ca.crt")
YAML
}

up() {
  "$HACK_DIR/build-metrics-server.sh"
  "$HACK_DIR/pki.sh" metrics-server "$NODE_IP"
  register
  if ! running; then
    mkdir -p "$LOG_DIR"
    log "starting metrics-server $METRICS_SERVER_VERSION on https://$NODE_IP:$METRICS_SERVER_PORT (log $logfile)"
    setsid "$bin" \
      --bind-address="$NODE_IP" --secure-port="$METRICS_SERVER_PORT" \
      --tls-cert-file="$PKI_DIR/metrics-server-serving.crt" \
      --tls-private-key-file="$PKI_DIR/metrics-server-serving.key" \
      --kubeconfig="$PKI_DIR/metrics-server.kubeconfig" \
      --authentication-kubeconfig="$PKI_DIR/metrics-server.kubeconfig" \
      --authorization-kubeconfig="$PKI_DIR/metrics-server.kubeconfig" \
      --kubelet-certificate-authority="$PKI_DIR/ca.crt" \
      --kubelet-client-certificate="$PKI_DIR/metrics-server.crt" \
      --kubelet-client-key="$PKI_DIR/metrics-server.key" \
      --kubelet-preferred-address-types=InternalIP \
      --kubelet-use-node-status-port \
      --metric-resolution=15s \
      >>"$logfile" 2>&1 </dev/null &
    echo $! >"$pidfile"
  fi
  wait_for "the metrics.k8s.io APIService to be Available" "${TIMEOUT:-90}" available || { tail -20 "$logfile" >&2; exit 1; }
  log "metrics-server is serving metrics.k8s.io"
}

down() {
  if running; then
    local pid; pid=$(cat "$pidfile")
    kill "$pid" 2>/dev/null || true
    wait_for "metrics-server to exit" 30 bash -c "! kill -0 $pid 2>/dev/null" || true
  fi
  rm -f "$pidfile"
  "${kc[@]}" delete apiservice v1beta1.metrics.k8s.io --ignore-not-found >/dev/null 2>&1 || true
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) running ;;
  *) die "usage: $0 up|down|status" ;;
esac
