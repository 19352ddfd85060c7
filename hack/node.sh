#!/usr/bin/env bash
# Runs a vk-cri node on the local stack (hack/stack-up.sh must have run).
#   hack/node.sh start NAME [PORT]   start vk-cri as node NAME (kubelet API on NODE_IP:PORT, default 10250)
#   hack/node.sh stop NAME           SIGTERM, wait for exit (pods keep running in the runtime)
#   hack/node.sh kill NAME           SIGKILL, as a crash would
#   hack/node.sh status NAME         exit 0 iff running
#   hack/node.sh wait-ready NAME     wait until the Node is Ready
#   hack/node.sh remove NAME         stop it, delete its pods from the runtime and the Node object
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"

cmd=${1:?usage: node.sh start|stop|kill|status|wait-ready|remove NAME [PORT]}
name=${2:?node name required}
port=${3:-10250}
ENV_FILE="$STACK_DIR/env"
[[ -f "$ENV_FILE" ]] || die "no $ENV_FILE: run hack/stack-up.sh first"
set -a; source "$ENV_FILE"; set +a

pidfile="$STACK_DIR/vk-cri-$name.pid"
logfile="$STACK_DIR/logs/vk-cri-$name.log"
VKCRI_BIN=${VKCRI_BIN:-$REPO_DIR/bin/vk-cri}

running() { [[ -f "$pidfile" ]] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

node_ready() {
  [[ "$("$KUBECTL" --kubeconfig "$KUBECONFIG" get node "$name" \
        -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" == True ]]
}

stop_signal() {
  local sig=$1
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
    [[ -f "$PKI_DIR/serving-$name.crt" ]] || "$HACK_DIR/pki.sh" serving-cert "$name" "$NODE_IP" >/dev/null
    mkdir -p "$STACK_DIR/logs" "$STACK_DIR/nodes/$name"
    log "starting vk-cri node $name (kubelet API $NODE_IP:$port, log $logfile)"
    setsid "$VKCRI_BIN" \
      --nodename "$name" \
      --kubeconfig "$VKCRI_KUBECONFIG" \
      --cri-endpoint "$CRI_ENDPOINT" \
      --node-ip "$NODE_IP" \
      --address "$NODE_IP" --port "$port" \
      --tls-cert-file "$PKI_DIR/serving-$name.crt" \
      --tls-private-key-file "$PKI_DIR/serving-$name.key" \
      --client-ca-file "$CLIENT_CA" \
      --root-dir "$STACK_DIR/nodes/$name" \
      --pod-log-dir "$STACK_DIR/nodes/$name/pods-logs" \
      --cgroup-root "/vk-cri-$name" \
      ${VKCRI_EXTRA_ARGS:-} \
      >>"$logfile" 2>&1 </dev/null &
    echo $! >"$pidfile"
    ;;
  stop) stop_signal TERM ;;
  kill) stop_signal KILL ;;
  status) running ;;
  wait-ready)
    wait_for "node $name to be Ready" "${TIMEOUT:-60}" node_ready || { tail -20 "$logfile" >&2; exit 1; }
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
    log "node $name removed"
    ;;
  *) die "unknown command $cmd" ;;
esac
