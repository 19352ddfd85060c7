#!/usr/bin/env bash
# Runs a vk-cri node on the local stack (hack/stack-up.sh must have run).
#   hack/node.sh start NAME [PORT]   start vk-cri as node NAME (kubelet API on NODE_IP:PORT, default 10250)
#   hack/node.sh stop NAME           SIGTERM, wait for exit (pods keep running in the runtime)
#   hack/node.sh kill NAME           SIGKILL, as a crash would
#   hack/node.sh status NAME         exit 0 iff running
#   hack/node.sh wait-ready NAME     wait until the Node is Ready
#   hack/node.sh remove NAME         stop it, delete its pods from the runtime and the Node object
#
# Each node has an identity of its own, obtained as a kubeadm node's kubelet obtains it: TLS
# bootstrap with the stack's bootstrap token ($PKI_DIR/bootstrap.kubeconfig) for a client
# certificate of system:node:NAME (group system:nodes), approved and signed by
# kube-controller-manager, kept in $STACK_DIR/nodes/NAME/pki (kubelet-client-current.pem) and
# renewed before it expires; $STACK_DIR/nodes/NAME/kubelet.kubeconfig points at it. The Node
# authorizer and NodeRestriction hold it to what a kubelet may do.
#
# The kubelet API is served on NODE_IP:PORT with a serving certificate requested through the
# certificates API (--rotate-server-certificates), which hack/csr-approver.sh approves while the
# node runs; VKCRI_SERVING_CERT=files gives it a certificate signed by the cluster CA instead
# (hack/pki.sh). Its localhost healthz port is PORT+1000 (the kubelet's 10248 is the ref node's).
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"

cmd=${1:?usage: node.sh start|stop|kill|status|wait-ready|remove NAME [PORT]}
name=${2:?node name required}
port=${3:-10250}
# VKCRI_STACK_ENV: another env than the stack's, e.g. one that hack/crio.sh env wrote for a node on
# a CRI-O instance next to the stack (its CRI_ENDPOINT, NODE_IP and POD_SUBNET).
ENV_FILE=${VKCRI_STACK_ENV:-$STACK_DIR/env}
[[ -f "$ENV_FILE" ]] || die "no $ENV_FILE: run hack/stack-up.sh first"
set -a; source "$ENV_FILE"; set +a

pidfile="$STACK_DIR/vk-cri-$name.pid"
approver_pidfile="$STACK_DIR/csr-approver-$name.pid"
logfile="$STACK_DIR/logs/vk-cri-$name.log"
VKCRI_BIN=${VKCRI_BIN:-$REPO_DIR/bin/vk-cri}

running() { [[ -f "$pidfile" ]] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

node_ready() {
  [[ "$("$KUBECTL" --kubeconfig "$KUBECONFIG" get node "$name" \
        -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" == True ]]
}

# kubelet_api_serving: the node's kubelet API completes a TLS handshake verified against the
# cluster CA (its certificate is issued some time after the node is Ready) and answers 401 to
# a caller without credentials.
kubelet_api_serving() {
  local port
  port=$("$KUBECTL" --kubeconfig "$KUBECONFIG" get node "$name" -o jsonpath='{.status.daemonEndpoints.kubeletEndpoint.Port}' 2>/dev/null)
  [[ -n "$port" ]] && [[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 --cacert "$CLIENT_CA" "https://$NODE_IP:$port/healthz")" == 401 ]]
}

stop_approver() {
  if [[ -f "$approver_pidfile" ]]; then
    kill -- "-$(cat "$approver_pidfile")" 2>/dev/null || true
    rm -f "$approver_pidfile"
  fi
}

stop_signal() {
  local sig=$1
  stop_approver
  running || { rm -f "$pidfile"; return 0; }
  local pid; pid=$(cat "$pidfile")
  kill "-$sig" "$pid" 2>/dev/null || true
  wait_for "vk-cri $name to exit" 60 bash -c "! kill -0 $pid 2>/dev/null"
  rm -f "$pidfile"
}

case "$cmd" in
  start)
    if running; then log "vk-cri $name already running (pid $(cat "$pidfile"))"; exit 0; fi
    [[ -x "$VKCRI_BIN" ]] || die "$VKCRI_BIN not built: run make build"
    bootstrap_kubeconfig=${BOOTSTRAP_KUBECONFIG:-$PKI_DIR/bootstrap.kubeconfig}
    [[ -f "$bootstrap_kubeconfig" ]] || "$HACK_DIR/pki.sh" >/dev/null
    serving_args=(--rotate-server-certificates)
    if [[ "${VKCRI_SERVING_CERT:-csr}" == files ]]; then
      [[ -f "$PKI_DIR/serving-$name.crt" ]] || "$HACK_DIR/pki.sh" serving-cert "$name" "$NODE_IP" >/dev/null
      serving_args=(--tls-cert-file "$PKI_DIR/serving-$name.crt" --tls-private-key-file "$PKI_DIR/serving-$name.key")
    fi
    mkdir -p "$STACK_DIR/logs" "$STACK_DIR/nodes/$name"
    log "starting vk-cri node $name (kubelet API $NODE_IP:$port, log $logfile)"
    setsid "$VKCRI_BIN" \
      --nodename "$name" \
      --bootstrap-kubeconfig "$bootstrap_kubeconfig" \
      --kubeconfig "$STACK_DIR/nodes/$name/kubelet.kubeconfig" \
      --rotate-certificates \
      --cert-dir "$STACK_DIR/nodes/$name/pki" \
      --cri-endpoint "$CRI_ENDPOINT" \
      --node-ip "$NODE_IP" \
      --address "$NODE_IP" --port "$port" \
      "${serving_args[@]}" \
      --client-ca-file "$CLIENT_CA" \
      --healthz-port $((port + 1000)) \
      --root-dir "$STACK_DIR/nodes/$name" \
      --pod-log-dir "$STACK_DIR/nodes/$name/pods-logs" \
      --system-log-dir "$STACK_DIR/logs" \
      --cgroup-root "/vk-cri-$name" \
      ${VKCRI_EXTRA_ARGS:-} \
      >>"$logfile" 2>&1 </dev/null &
    echo $! >"$pidfile"
    if [[ "${VKCRI_SERVING_CERT:-csr}" != files ]]; then
      stop_approver
      setsid "$HACK_DIR/csr-approver.sh" "$name" "$(cat "$pidfile")" >>"$logfile" 2>&1 </dev/null &
      echo $! >"$approver_pidfile"
    fi
    ;;
  stop) stop_signal TERM ;;
  kill) stop_signal KILL ;;
  status) running ;;
  wait-ready)
    wait_for "node $name to be Ready" "${TIMEOUT:-60}" node_ready || { tail -20 "$logfile" >&2; exit 1; }
    wait_for "node $name's kubelet API to serve a verifiable certificate" "${TIMEOUT:-60}" kubelet_api_serving || { tail -20 "$logfile" >&2; exit 1; }
    log "node $name is Ready"
    ;;
  remove)
    # Deleting the pods through the API first lets vk-cri stop them within their grace periods.
    if running; then
      "$KUBECTL" --kubeconfig "$KUBECONFIG" delete pods --all-namespaces --field-selector "spec.nodeName=$name" \
        --wait=true --timeout=90s >/dev/null 2>&1 || true
    fi
    stop_signal TERM
    "$KUBECTL" --kubeconfig "$KUBECONFIG" delete node "$name" --ignore-not-found >/dev/null 2>&1 || true
    # Anything the node still owns in the runtime goes too.
    if "$CRICTL" --runtime-endpoint "$CRI_ENDPOINT" version >/dev/null 2>&1; then
      for sb in $("$CRICTL" --runtime-endpoint "$CRI_ENDPOINT" pods -q --label "io.vk-cri.node=$name" 2>/dev/null); do
        "$CRICTL" --runtime-endpoint "$CRI_ENDPOINT" stopp "$sb" >/dev/null 2>&1 || true
        "$CRICTL" --runtime-endpoint "$CRI_ENDPOINT" rmp "$sb" >/dev/null 2>&1 || true
      done
    fi
    # Pod volumes left behind (tmpfs, subPath binds of host paths): unmounted before the pod
    # directories go, so that removing them never reaches through a mount.
    if [[ -d "$STACK_DIR/nodes/$name/pods" ]]; then
      unmount_under "$STACK_DIR/nodes/$name/pods"
      rm -rf "$STACK_DIR/nodes/$name/pods"
    fi
    # vk-cri bind-mounts its root dir on itself to make it shared (as the kubelet does).
    unmount_under "$STACK_DIR/nodes/$name"
    # Its certificates go with it: a node of the same name bootstraps anew.
    rm -rf "$STACK_DIR/nodes/$name/pki" "$STACK_DIR/nodes/$name/kubelet.kubeconfig"
    log "node $name removed"
    ;;
  *) die "unknown command $cmd" ;;
esac
