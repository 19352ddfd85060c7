#!/usr/bin/env bash
# A second control plane (etcd, kube-apiserver, controller-manager, scheduler on ports of its own,
# its own PKI and state dir) on the main stack's containerd and registry, for conformance runs.
# A run makes its node the only schedulable one of its cluster; on this plane that cordons nothing
# of the main stack, so `make test` and development go on while the suite runs.
#
#   hack/conformance-plane.sh up            start it (idempotent); the main stack must be up
#   hack/conformance-plane.sh down          stop its vk-cri nodes and control plane, remove its state
#   hack/conformance-plane.sh run CMD ARG…  run a hack/ command (or any command) against this plane,
#                                           e.g. run hack/node.sh start vk-conf 10290
#
# It reads nothing of the main stack but its env file (runtime endpoint, registry, node IP).
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"

MAIN_STACK_DIR=$STACK_DIR
PLANE_DIR=${VKCRI_CONF_PLANE_DIR:-/var/run/vk-cri-conf}

# plane_env: the settings every hack/ script reads, pointed at this plane.
plane_env() {
  export VKCRI_STACK_DIR=$PLANE_DIR VKCRI_RUNTIME_STACK_DIR=$MAIN_STACK_DIR
  export ETCD_PORT=23791 ETCD_PEER_PORT=23801 APISERVER_PORT=16444
  export CONTROLLER_MANAGER_PORT=10357 SCHEDULER_PORT=10359
}

cmd=${1:?usage: conformance-plane.sh up|down|run CMD...}
shift
case "$cmd" in
  up)
    [[ -f "$MAIN_STACK_DIR/env" ]] || die "the main stack is not up (hack/stack-up.sh)"
    plane_env
    mkdir -p "$PLANE_DIR/logs"
    "$HACK_DIR/pki.sh"
    "$HACK_DIR/control-plane.sh" start
    # The main stack's env with this plane's identities and API server.
    pki="$PLANE_DIR/pki"
    tmp=$(mktemp "$PLANE_DIR/.env.XXXXXX")
    sed -e "s#^KUBECONFIG=.*#KUBECONFIG=$pki/admin.kubeconfig#" \
        -e "s#^VKCRI_KUBECONFIG=.*#VKCRI_KUBECONFIG=$pki/vk-cri.kubeconfig#" \
        -e "s#^CLIENT_CA=.*#CLIENT_CA=$pki/ca.crt#" \
        -e "s#^PKI_DIR=.*#PKI_DIR=$pki#" \
        -e "s#^STACK_DIR=.*#STACK_DIR=$PLANE_DIR#" \
        -e "s#^APISERVER_URL=.*#APISERVER_URL=https://127.0.0.1:$APISERVER_PORT#" \
        "$MAIN_STACK_DIR/env" >"$tmp"
    chmod 644 "$tmp"
    mv "$tmp" "$PLANE_DIR/env"
    log "conformance plane up: API server https://127.0.0.1:$APISERVER_PORT, env $PLANE_DIR/env"
    ;;
  down)
    plane_env
    if [[ -f "$PLANE_DIR/env" ]]; then
      for pidfile in "$PLANE_DIR"/vk-cri-*.pid; do
        [[ -e "$pidfile" ]] || continue
        n=${pidfile##*/vk-cri-}; n=${n%.pid}
        "$HACK_DIR/node.sh" remove "$n" || true
      done
    fi
    "$HACK_DIR/control-plane.sh" stop || true
    rm -rf "$PLANE_DIR"
    log "conformance plane down"
    ;;
  run)
    (( $# > 0 )) || die "usage: conformance-plane.sh run CMD ARG..."
    plane_env
    exec "$@"
    ;;
  *) die "unknown command $cmd" ;;
esac
