#!/usr/bin/env bash
# Runs a local Kubernetes control plane on 127.0.0.1: etcd (plain http, loopback only),
# kube-apiserver, kube-controller-manager and kube-scheduler, built by hack/build-k8s.sh.
#
#   hack/control-plane.sh start          builds (cached), makes the PKI, starts what is not
#                                        running, waits for /readyz and the default
#                                        ServiceAccount, applies hack/rbac/*.yaml
#   hack/control-plane.sh stop [--purge] stops them in reverse order; --purge also removes the
#                                        etcd data (the next start is a fresh cluster)
#   hack/control-plane.sh status         exit 0 iff all four run and /readyz is ok
#   hack/control-plane.sh restart-apiserver | restart-controller-manager
#                                        restarts that component alone (after a change of its
#                                        flags); the other components reconnect by themselves
#
# As on a kubeadm cluster: the API server authorizes with Node,RBAC, admits with NodeRestriction
# (beside the default plugins) and authenticates bootstrap tokens; the controller-manager approves
# and signs node client certificates (csrapproving, csrsigning with the cluster CA) and runs the
# bootstrapsigner and tokencleaner controllers. start keeps the nodes' bootstrap token
# ($PKI_DIR/bootstrap-token) as a Secret in kube-system, valid for 24 hours from each start, and
# the cluster-info ConfigMap in kube-public; hack/rbac/kubeadm-bootstrap.yaml binds the roles.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

ETCD_DATA_DIR="$STACK_DIR/etcd"
COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler)

readyz() { kubectl_admin get --raw /readyz >/dev/null 2>&1; }
etcd_healthy() { curl -fsS --max-time 2 "http://127.0.0.1:$ETCD_PORT/health" 2>/dev/null | grep -q '"health":"true"'; }
default_sa() { kubectl_admin -n default get serviceaccount default >/dev/null 2>&1; }

# port_free PORT: nothing listens on 127.0.0.1:PORT (or on all addresses).
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

check_port() {
  local name=$1 port=$2
  port_free "$port" || die "$name: port $port on 127.0.0.1 is taken by another process ($(ss -ltnpH "sport = :$port" 2>/dev/null | head -1))"
}

start_etcd() {
  if is_running etcd; then log "etcd already running, pid $(pid_of etcd)"; return; fi
  check_port etcd "$ETCD_PORT"; check_port "etcd peer" "$ETCD_PEER_PORT"
  mkdir -p "$ETCD_DATA_DIR"; chmod 700 "$ETCD_DATA_DIR"
  log "starting etcd $ETCD_VERSION on http://127.0.0.1:$ETCD_PORT (data $ETCD_DATA_DIR)"
  # etcd takes every ETCD_* environment variable for a flag: give it none.
  local unset_env=() v
  for v in $(compgen -e); do [[ "$v" == ETCD_* ]] && unset_env+=(-u "$v"); done
  start_bg etcd env "${unset_env[@]}" "$BIN_DIR/etcd" \
    --name=vk-cri \
    --data-dir="$ETCD_DATA_DIR" \
    --listen-client-urls="http://127.0.0.1:$ETCD_PORT" \
    --advertise-client-urls="http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-advertise-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster="vk-cri=http://127.0.0.1:$ETCD_PEER_PORT" \
    --unsafe-no-fsync=true \
    --log-level=warn
}

# Pods reach the API server on their bridge's address (e.g. https://10.88.0.1:16443, server name
# kubernetes.default.svc, which the serving certificate carries) with their service-account
# token, as they would through the kubernetes Service; so it listens on every address, not only
# on loopback. Clients of the stack keep using 127.0.0.1.
APISERVER_BIND_ADDRESS=${APISERVER_BIND_ADDRESS:-0.0.0.0}

start_apiserver() {
  if is_running kube-apiserver; then log "kube-apiserver already running, pid $(pid_of kube-apiserver)"; return; fi
  check_port kube-apiserver "$APISERVER_PORT"
  log "starting kube-apiserver $K8S_VERSION on https://$APISERVER_BIND_ADDRESS:$APISERVER_PORT"
  start_bg kube-apiserver "$BIN_DIR/kube-apiserver" \
    --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
    --bind-address="$APISERVER_BIND_ADDRESS" \
    --secure-port="$APISERVER_PORT" \
    --advertise-address=127.0.0.1 \
    --endpoint-reconciler-type=none \
    --tls-cert-file="$PKI_DIR/apiserver.crt" \
    --tls-private-key-file="$PKI_DIR/apiserver.key" \
    --client-ca-file="$PKI_DIR/ca.crt" \
    --authorization-mode=Node,RBAC \
    --enable-admission-plugins=NodeRestriction \
    --enable-bootstrap-token-auth=true \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$PKI_DIR/sa.pub" \
    --service-account-signing-key-file="$PKI_DIR/sa.key" \
    --service-cluster-ip-range="$SERVICE_CIDR" \
    --allow-privileged=true \
    --requestheader-client-ca-file="$PKI_DIR/front-proxy-ca.crt" \
    --requestheader-allowed-names=front-proxy-client \
    --requestheader-username-headers=X-Remote-User \
    --requestheader-group-headers=X-Remote-Group \
    --requestheader-extra-headers-prefix=X-Remote-Extra- \
    --proxy-client-cert-file="$PKI_DIR/front-proxy-client.crt" \
    --proxy-client-key-file="$PKI_DIR/front-proxy-client.key" \
    --kubelet-client-certificate="$PKI_DIR/apiserver-kubelet-client.crt" \
    --kubelet-client-key="$PKI_DIR/apiserver-kubelet-client.key" \
    --kubelet-certificate-authority="$PKI_DIR/ca.crt" \
    --kubelet-preferred-address-types=InternalIP,Hostname \
    --profiling=false
}

start_controller_manager() {
  if is_running kube-controller-manager; then log "kube-controller-manager already running, pid $(pid_of kube-controller-manager)"; return; fi
  check_port kube-controller-manager "$CONTROLLER_MANAGER_PORT"
  log "starting kube-controller-manager $K8S_VERSION"
  local kc="$PKI_DIR/controller-manager.kubeconfig"
  start_bg kube-controller-manager "$BIN_DIR/kube-controller-manager" \
    --kubeconfig="$kc" \
    --authentication-kubeconfig="$kc" \
    --authorization-kubeconfig="$kc" \
    --bind-address=127.0.0.1 \
    --secure-port="$CONTROLLER_MANAGER_PORT" \
    --client-ca-file="$PKI_DIR/ca.crt" \
    --requestheader-client-ca-file="$PKI_DIR/front-proxy-ca.crt" \
    --use-service-account-credentials=true \
    --root-ca-file="$PKI_DIR/ca.crt" \
    --service-account-private-key-file="$PKI_DIR/sa.key" \
    --cluster-signing-cert-file="$PKI_DIR/ca.crt" \
    --cluster-signing-key-file="$PKI_DIR/ca.key" \
    --cluster-signing-duration="$CLUSTER_SIGNING_DURATION" \
    --service-cluster-ip-range="$SERVICE_CIDR" \
    --allocate-node-cidrs=false \
    --controllers='*,bootstrapsigner,tokencleaner,-nodeipam' \
    --leader-elect=false \
    --profiling=false
}

start_scheduler() {
  if is_running kube-scheduler; then log "kube-scheduler already running, pid $(pid_of kube-scheduler)"; return; fi
  check_port kube-scheduler "$SCHEDULER_PORT"
  log "starting kube-scheduler $K8S_VERSION"
  local kc="$PKI_DIR/scheduler.kubeconfig"
  start_bg kube-scheduler "$BIN_DIR/kube-scheduler" \
    --kubeconfig="$kc" \
    --authentication-kubeconfig="$kc" \
    --authorization-kubeconfig="$kc" \
    --bind-address=127.0.0.1 \
    --secure-port="$SCHEDULER_PORT" \
    --leader-elect=false \
    --profiling=false
}

# CLUSTER_SIGNING_DURATION: the lifetime of the certificates the controller-manager signs (its
# default and kubeadm's: a year; shorter to watch node client certificates rotate).
CLUSTER_SIGNING_DURATION=${CLUSTER_SIGNING_DURATION:-8760h}

# BOOTSTRAP_TOKEN_TTL: how long the nodes' bootstrap token stays valid after each start
# (kubeadm's default is 24h; tokencleaner deletes it once expired).
BOOTSTRAP_TOKEN_TTL=${BOOTSTRAP_TOKEN_TTL:-24 hours}

# apply_bootstrap_token: the Secret of $PKI_DIR/bootstrap-token (kubeadm's bootstrap token format)
# and the cluster-info ConfigMap the bootstrapsigner controller signs with it.
apply_bootstrap_token() {
  local token id secret expiration
  token=$(<"$PKI_DIR/bootstrap-token")
  id=${token%%.*} secret=${token#*.}
  expiration=$(date -u -d "now + $BOOTSTRAP_TOKEN_TTL" +%Y-%m-%dT%H:%M:%SZ)
  kubectl_admin apply -f - >&2 <<EOF
apiVersion: v1
kind: Secret
metadata:
  name: bootstrap-token-$id
  namespace: kube-system
  labels:
    app.kubernetes.io/part-of: vk-cri
type: bootstrap.kubernetes.io/token
stringData:
  description: "TLS bootstrap of the local stack's nodes (hack/control-plane.sh)"
  token-id: "$id"
  token-secret: "$secret"
  expiration: "$expiration"
  usage-bootstrap-authentication: "true"
  usage-bootstrap-signing: "true"
  auth-extra-groups: system:bootstrappers:kubeadm:default-node-token
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cluster-info
  namespace: kube-public
  labels:
    app.kubernetes.io/part-of: vk-cri
data:
  kubeconfig: |
    apiVersion: v1
    kind: Config
    clusters:
    - name: ""
      cluster:
        certificate-authority-data: $(base64 -w0 "$PKI_DIR/ca.crt")
        server: https://127.0.0.1:$APISERVER_PORT
    contexts: []
    users: []
EOF
}

# await NAME DESCRIPTION TIMEOUT CHECK...: waits for CHECK while process NAME stays alive.
await() {
  local name=$1 what=$2 timeout=$3; shift 3
  local start=$SECONDS
  until "$@"; do
    if ! is_running "$name"; then
      tail -n 30 "$LOG_DIR/$name.log" >&2 || true
      die "$name exited (log: $LOG_DIR/$name.log)"
    fi
    if (( SECONDS - start >= timeout )); then
      tail -n 30 "$LOG_DIR/$name.log" >&2 || true
      die "timed out after ${timeout}s waiting for $what (log: $LOG_DIR/$name.log)"
    fi
    sleep 0.3
  done
}

start() {
  local t0=$SECONDS
  # Serialize builds between concurrent callers.
  mkdir -p "$CACHE_DIR"
  (flock 9; "$HACK_DIR/build-k8s.sh") 9>"$CACHE_DIR/.build-k8s.lock"
  "$HACK_DIR/pki.sh"
  mkdir -p "$STACK_DIR" "$LOG_DIR"

  start_etcd
  await etcd "etcd /health" 30 etcd_healthy
  start_apiserver
  await kube-apiserver "kube-apiserver /readyz" 90 readyz
  log "kube-apiserver ready"
  start_controller_manager
  start_scheduler
  await kube-controller-manager "the default ServiceAccount in namespace default" 60 default_sa
  is_running kube-scheduler || die "kube-scheduler exited (log: $LOG_DIR/kube-scheduler.log)"

  log "applying RBAC from $HACK_DIR/rbac"
  kubectl_admin apply -f "$HACK_DIR/rbac/" >&2
  apply_bootstrap_token
  log "control plane ready in $((SECONDS - t0))s: https://127.0.0.1:$APISERVER_PORT (admin kubeconfig $PKI_DIR/admin.kubeconfig)"
}

stop() {
  local purge=${1:-}
  local i
  for (( i=${#COMPONENTS[@]}-1; i>=0; i-- )); do
    if is_running "${COMPONENTS[i]}"; then
      stop_bg "${COMPONENTS[i]}" 20
    else
      rm -f "$STACK_DIR/${COMPONENTS[i]}.pid"
    fi
  done
  if [[ "$purge" == --purge && -d "$ETCD_DATA_DIR" ]]; then
    log "removing etcd data $ETCD_DATA_DIR"
    rm -rf "$ETCD_DATA_DIR"
  fi
  log "control plane stopped"
}

restart_apiserver() {
  if is_running kube-apiserver; then stop_bg kube-apiserver 20; fi
  start_apiserver
  await kube-apiserver "kube-apiserver /readyz" 90 readyz
  log "kube-apiserver restarted"
}

restart_controller_manager() {
  if is_running kube-controller-manager; then stop_bg kube-controller-manager 20; fi
  start_controller_manager
  await kube-controller-manager "the default ServiceAccount in namespace default" 60 default_sa
  log "kube-controller-manager restarted"
}

status() {
  local c rc=0
  for c in "${COMPONENTS[@]}"; do
    if is_running "$c"; then log "$c: running, pid $(pid_of "$c")"; else log "$c: not running"; rc=1; fi
  done
  if readyz; then log "kube-apiserver /readyz: ok"; else log "kube-apiserver /readyz: not ready"; rc=1; fi
  return $rc
}

case "${1:-}" in
  start) start ;;
  stop) stop "${2:-}" ;;
  status) status ;;
  restart-apiserver) restart_apiserver ;;
  restart-controller-manager) restart_controller_manager ;;
  *) echo "usage: $0 start|stop [--purge]|status|restart-apiserver|restart-controller-manager" >&2; exit 2 ;;
esac
