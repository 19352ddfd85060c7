#!/usr/bin/env bash
# The reference node: the upstream kubelet (v1.37.2, built by hack/build-k8s.sh) registered on the
# local stack beside the vk-cri nodes, running its pods on its own runtime instance "ref" of the
# stack's runtime (CONTAINER_RUNTIME in the stack env: hack/containerd.sh, bridge vkref0
# 10.89.0.0/16; or hack/crio.sh, bridge vkcrioref0 10.91.0.0/16). A kubelet kills every sandbox of
# its runtime it does not know, so it never shares the "vk" runtime.
#
#   hack/ref.sh up       brings the stack up if needed (hack/stack-up.sh), builds the kubelet if it
#                        is not cached, starts containerd "ref", makes the kubelet's credentials and
#                        configuration, starts the kubelet and waits until its Node is Ready and
#                        untainted. Idempotent.
#   hack/ref.sh down     cordons the Node, force-deletes the pods bound to it, stops the kubelet and
#                        containerd "ref" (its pods, shims, mounts, bridge), deletes the Node, unmounts
#                        what the kubelet mounted, removes its cgroups, root dir and pod logs.
#   hack/ref.sh status   exit 0 iff the kubelet runs and its Node is Ready.
#
# Environment: REF_NODE (node name, default "ref"), REF_KUBELET_PORT (10250; the kubelet API on
# REF_NODE_IP=10.89.0.1), REF_HEALTHZ_PORT (10248, on 127.0.0.1), REF_KUBELET_ARGS (extra kubelet
# flags, e.g. "--v=4"), REF_KUBELET_CONFIG_DIR (a --config-dir of *.conf drop-ins overriding the
# generated configuration), REF_READY_TIMEOUT (seconds, default 120), REF_STATE_DIR (where
# kubelet-NAME/ goes, default $STACK_DIR), VKCRI_STACK_ENV (another env than $STACK_DIR/env, e.g.
# one hack/crio.sh env wrote: the kubelet then runs on that CRI-O's "ref" instance). A second
# reference node (REF_NODE=ref-crio, its own ports) has its own dir, cgroup root and PID file.
#
# Files: $STACK_DIR/kubelet-NAME/{kubelet-config.yaml,root/,pod-logs/,sysctl/} (NAME is REF_NODE),
# PID in $STACK_DIR/kubelet-NAME.pid, log in $STACK_DIR/logs/kubelet-NAME.log, credentials in $PKI_DIR
# (kubelet-NAME.{crt,key,kubeconfig}: CN=system:node:NAME, O=system:nodes; serving-NAME.{crt,key}).
#
# Two things the kubelet would otherwise change on the host are kept away from it:
#  - At start the kubelet sets vm.overcommit_memory=1, kernel.panic=10 and kernel.panic_on_oops=1
#    (or, with protectKernelDefaults, refuses to start when they differ). It runs in a mount
#    namespace of its own in which those /proc/sys files are bind mounts of private copies, so it
#    "sets" the copies. Its root dir is a shared mount, so the volumes it mounts there propagate to
#    the host, where containerd "ref" bind-mounts them into containers.
#  - makeIPTablesUtilChains is off: no KUBE-FIREWALL / KUBE-IPTABLES-HINT chains in the host's
#    iptables (the kubelet itself does not need them; they serve kube-proxy).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

REF_NODE=${REF_NODE:-ref}
REF_KUBELET_PORT=${REF_KUBELET_PORT:-10250}
REF_HEALTHZ_PORT=${REF_HEALTHZ_PORT:-10248}
REF_READY_TIMEOUT=${REF_READY_TIMEOUT:-120}
# Canonical path (/var/run is a symlink to /run): the kubelet compares its root dir with the mount
# table, so a path through a symlink makes it stack a second bind mount on its root dir.
REF_DIR="$(realpath -m "${REF_STATE_DIR:-$STACK_DIR}")/kubelet-$REF_NODE"
ROOT_DIR="$REF_DIR/root"
POD_LOGS_DIR="$REF_DIR/pod-logs"
SYSCTL_DIR="$REF_DIR/sysctl"
CONFIG_FILE="$REF_DIR/kubelet-config.yaml"
NODE_NAME_FILE="$REF_DIR/node-name"
CGROUP_ROOT=/kubelet-$REF_NODE
PIDNAME=kubelet-$REF_NODE
KUBELET="$BIN_DIR/kubelet"
ENV_FILE=${VKCRI_STACK_ENV:-$STACK_DIR/env}
# The kubelet writes a symlink per container here (a fixed path); down removes ours.
LEGACY_LOG_DIR=/var/log/containers
LEGACY_LOG_MARKER="$REF_DIR/created-var-log-containers"
# The kernel tunables the kubelet's container manager checks and sets at start.
KUBELET_SYSCTLS=(vm/overcommit_memory vm/panic_on_oom kernel/panic kernel/panic_on_oops
                 kernel/keys/root_maxkeys kernel/keys/root_maxbytes)

usage() { echo "usage: $0 up|down|status" >&2; exit 2; }

load_env() {
  [[ -f "$ENV_FILE" ]] || return 1
  set -a
  # shellcheck disable=SC1090 # written by hack/stack-up.sh
  source "$ENV_FILE"
  set +a
}

kc() { "$KUBECTL" --kubeconfig "$KUBECONFIG" "$@"; }
api_up() { kc get --raw /readyz >/dev/null 2>&1; }

node_ready() {
  [[ "$(kc get node "$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" == True ]]
}
# node_ready_since NAME EPOCH: Ready, as posted by a kubelet at or after EPOCH (a Node left from
# an earlier run can still say Ready).
node_ready_since() {
  local out status hb
  out=$(kc get node "$1" -o jsonpath='{range .status.conditions[?(@.type=="Ready")]}{.status} {.lastHeartbeatTime}{end}' 2>/dev/null) || return 1
  read -r status hb <<<"$out"
  [[ "$status" == True && -n "$hb" ]] || return 1
  (( $(date -d "$hb" +%s) >= $2 ))
}
node_untainted() {
  local t
  t=$(kc get node "$1" -o jsonpath='{.spec.taints}' 2>/dev/null) || return 1
  [[ -z "$t" || "$t" == "[]" ]]
}

# port_free IP PORT: nothing accepts connections on IP:PORT.
port_free() { ! (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

# cgroup_mounts: mount points of the cgroup hierarchies (v1, and v2 when mounted).
cgroup_mounts() { awk '$9 == "cgroup" || $9 == "cgroup2" {print $5}' /proc/self/mountinfo; }
cgroup_v1_mounts() { awk '$9 == "cgroup" {print $5}' /proc/self/mountinfo; }

# ensure_cgroup_root: the kubelet refuses a cgroupRoot that does not exist in every hierarchy it
# uses; create it in each v1 hierarchy (a new cpuset cgroup starts with no CPUs/memory nodes:
# give it the parent's).
ensure_cgroup_root() {
  local mp dir f
  while IFS= read -r mp; do
    dir="$mp$CGROUP_ROOT"
    [[ -d "$dir" ]] || mkdir "$dir"
    for f in cpuset.cpus cpuset.mems; do
      if [[ -f "$dir/$f" && -z "$(<"$dir/$f")" ]]; then cat "$mp/$f" >"$dir/$f"; fi
    done
  done < <(cgroup_v1_mounts)
}

# remove_cgroups: removes $CGROUP_ROOT and everything below it, deepest first, in every
# hierarchy; a cgroup that still has processes stays (and is reported).
remove_cgroups() {
  local mp dir left=() removed=0
  while IFS= read -r mp; do
    dir="$mp$CGROUP_ROOT"
    [[ -d "$dir" ]] || continue
    find "$dir" -depth -type d -exec rmdir {} \; 2>/dev/null || true
    if [[ -d "$dir" ]]; then left+=("$dir"); else removed=$((removed + 1)); fi
  done < <(cgroup_mounts)
  if (( ${#left[@]} )); then
    log "WARNING: cgroups not removed (processes still in them?): ${left[*]}"
  fi
  if (( removed )); then log "removed cgroup $CGROUP_ROOT from $removed hierarchies"; fi
}

mounts_under() {
  local dir
  dir=$(realpath -m "$1")
  awk -v d="$dir" '$5 == d || index($5, d "/") == 1 {print $5}' /proc/self/mountinfo
}

# ensure_shared_root: the kubelet's root dir is a shared mount (bind of itself), so that what
# the kubelet mounts there from its own mount namespace also appears on the host.
ensure_shared_root() {
  mkdir -p "$ROOT_DIR"
  local real
  real=$(realpath "$ROOT_DIR")
  if ! awk -v d="$real" '$5 == d {found=1} END {exit !found}' /proc/self/mountinfo; then
    mount --bind "$real" "$real"
  fi
  if [[ "$(findmnt -n -o PROPAGATION --target "$real" | tail -n 1)" != shared* ]]; then
    mount --make-shared "$real"
  fi
}

# write_sysctl_copies: private copies of the tunables the kubelet sets, with the host's values.
write_sysctl_copies() {
  local s f
  mkdir -p "$SYSCTL_DIR"
  for s in "${KUBELET_SYSCTLS[@]}"; do
    f="$SYSCTL_DIR/${s//\//.}"
    [[ -r "/proc/sys/$s" ]] && cat "/proc/sys/$s" >"$f"
  done
}

write_config() {
  local tmp
  mkdir -p "$REF_DIR" "$POD_LOGS_DIR" "$REF_DIR/volume-plugins"
  tmp=$(mktemp "$REF_DIR/.config.XXXXXX")
  cat >"$tmp" <<EOF
# Generated by hack/ref.sh: the reference kubelet ("$REF_NODE") on the local stack. Do not edit;
# put overrides in REF_KUBELET_CONFIG_DIR drop-ins instead.
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration

# This VM counts as cgroup v1 (v1 hierarchies, cgroup2 only at /sys/fs/cgroup/unified): the
# kubelet exits at once unless told to accept it. No swap here, but do not fail on it either.
failCgroupV1: false
failSwapOn: false
# runc runs with SystemdCgroup=false and there is no systemd. containerd 2.x tells the kubelet
# this driver through the RuntimeConfig RPC; containerd 1.6 has none, so it is set here too.
cgroupDriver: cgroupfs
# Pod cgroups under a root of its own (/kubelet-NAME/kubepods/...), apart from vk-cri's.
cgroupRoot: $CGROUP_ROOT
cgroupsPerQOS: true
enforceNodeAllocatable: ["pods"]

# Kubelet API: HTTPS on the node IP (the ref bridge), certificate signed by the cluster CA;
# clients authenticate with certificates of the cluster CA or bearer tokens (TokenReview), every
# request is authorized with a SubjectAccessReview, anonymous requests are refused.
address: $REF_NODE_IP
port: $REF_KUBELET_PORT
readOnlyPort: 0
tlsCertFile: $PKI_DIR/serving-$REF_NODE.crt
tlsPrivateKeyFile: $PKI_DIR/serving-$REF_NODE.key
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: $PKI_DIR/ca.crt
authorization:
  mode: Webhook
healthzBindAddress: 127.0.0.1
healthzPort: $REF_HEALTHZ_PORT

containerRuntimeEndpoint: $REF_CRI_ENDPOINT
resolvConf: /etc/resolv.conf
podLogsDir: $POD_LOGS_DIR
volumePluginDir: $REF_DIR/volume-plugins
registerNode: true

# Not the host's business: no KUBE-FIREWALL / KUBE-IPTABLES-HINT chains in its iptables.
makeIPTablesUtilChains: false
EOF
  mv "$tmp" "$CONFIG_FILE"
}

kubelet_args() {
  KUBELET_ARGS=(
    --config="$CONFIG_FILE"
    --kubeconfig="$PKI_DIR/kubelet-$REF_NODE.kubeconfig"
    --root-dir="$ROOT_DIR"
    --cert-dir="$REF_DIR/pki"
    --hostname-override="$REF_NODE"
    --node-ip="$REF_NODE_IP"
  )
  if [[ -n "${REF_KUBELET_CONFIG_DIR:-}" ]]; then KUBELET_ARGS+=(--config-dir="$REF_KUBELET_CONFIG_DIR"); fi
  # shellcheck disable=SC2206 # word splitting wanted: extra flags
  if [[ -n "${REF_KUBELET_ARGS:-}" ]]; then KUBELET_ARGS+=(${REF_KUBELET_ARGS}); fi
}

# exec_kubelet ARGS...: runs inside the kubelet's new mount namespace (unshare): binds the
# private copies of the kernel tunables over /proc/sys, then becomes the kubelet.
exec_kubelet() {
  # Never let these binds reach the host, whatever the host's propagation is.
  mount --make-rprivate /proc
  local s f
  for s in "${KUBELET_SYSCTLS[@]}"; do
    f="$SYSCTL_DIR/${s//\//.}"
    if [[ -f "$f" && -e "/proc/sys/$s" ]]; then mount --bind "$f" "/proc/sys/$s"; fi
  done
  exec "$KUBELET" "$@"
}

# wait_ready NAME [EPOCH]: waits until the node is Ready (reported at or after EPOCH) and untainted.
wait_ready() {
  local name=$1 since=${2:-0}
  if ! wait_for "node $name to be Ready" "$REF_READY_TIMEOUT" node_ready_since "$name" "$since"; then
    tail -n 30 "$LOG_DIR/$PIDNAME.log" >&2 || true
    die "node $name did not become Ready (log: $LOG_DIR/$PIDNAME.log)"
  fi
  # The node lifecycle controller removes node.kubernetes.io/not-ready once the node is Ready.
  if ! wait_for "node $name to lose its taints" 30 node_untainted "$name"; then
    log "WARNING: node $name still has taints: $(kc get node "$name" -o jsonpath='{.spec.taints}')"
  fi
}

up() {
  local t0=$SECONDS
  [[ "$REF_NODE" =~ ^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$ ]] || die "REF_NODE '$REF_NODE' is not a valid node name"
  "$HACK_DIR/stack-up.sh"
  WITH_KUBELET=1 "$HACK_DIR/build-k8s.sh"
  load_env || die "no $ENV_FILE after hack/stack-up.sh"
  [[ -n "${REF_NODE_IP:-}" && -n "${REF_CRI_ENDPOINT:-}" ]] || die "$ENV_FILE lacks REF_NODE_IP/REF_CRI_ENDPOINT"

  if is_running "$PIDNAME"; then
    local running_name
    running_name=$(cat "$NODE_NAME_FILE" 2>/dev/null || echo "$REF_NODE")
    [[ "$running_name" == "$REF_NODE" ]] \
      || die "the reference kubelet already runs as node '$running_name' (hack/ref.sh down first)"
    log "reference kubelet already running (pid $(pid_of "$PIDNAME")), node $REF_NODE"
    "$(runtime_script "${CONTAINER_RUNTIME:-containerd}")" start ref
    wait_ready "$REF_NODE"
    log "reference node $REF_NODE Ready in $((SECONDS - t0))s"
    return 0
  fi

  "$(runtime_script "${CONTAINER_RUNTIME:-containerd}")" start ref

  "$HACK_DIR/pki.sh" serving-cert "$REF_NODE" "$REF_NODE_IP" >/dev/null
  "$HACK_DIR/pki.sh" node-client-cert "$REF_NODE" >/dev/null

  port_free "$REF_NODE_IP" "$REF_KUBELET_PORT" \
    || die "$REF_NODE_IP:$REF_KUBELET_PORT is taken ($(ss -ltnpH "sport = :$REF_KUBELET_PORT" 2>/dev/null | head -1))"
  port_free 127.0.0.1 "$REF_HEALTHZ_PORT" \
    || die "127.0.0.1:$REF_HEALTHZ_PORT is taken ($(ss -ltnpH "sport = :$REF_HEALTHZ_PORT" 2>/dev/null | head -1)); set REF_HEALTHZ_PORT"

  mkdir -p "$REF_DIR"
  echo "$REF_NODE" >"$NODE_NAME_FILE"
  if [[ ! -e "$LEGACY_LOG_DIR" && ! -e "$LEGACY_LOG_MARKER" ]]; then touch "$LEGACY_LOG_MARKER"; fi
  ensure_cgroup_root
  ensure_shared_root
  write_sysctl_copies
  write_config
  kubelet_args

  log "starting the reference kubelet $("$KUBELET" --version 2>/dev/null | awk '{print $2}') as node $REF_NODE" \
      "(API https://$REF_NODE_IP:$REF_KUBELET_PORT, runtime $REF_CRI_ENDPOINT, log $LOG_DIR/$PIDNAME.log)"
  local started
  started=$(date +%s)
  start_bg "$PIDNAME" unshare --mount --propagation unchanged -- \
    "$HACK_DIR/ref.sh" __exec-kubelet "${KUBELET_ARGS[@]}"
  wait_ready "$REF_NODE" "$((started - 1))"
  log "reference node $REF_NODE Ready in $((SECONDS - t0))s"
}

# force_delete_pods NAME: deletes the pods bound to node NAME at once (grace period 0).
force_delete_pods() {
  local name=$1 n
  n=$(kc get pods -A --field-selector "spec.nodeName=$name" -o name 2>/dev/null | wc -l) || n=0
  (( n > 0 )) || return 0
  log "deleting $n pod(s) bound to node $name"
  kc delete pods -A --field-selector "spec.nodeName=$name" --grace-period=0 --force --wait=false \
    >/dev/null 2>&1 || log "  (kubectl delete pods failed)"
}

# clean_legacy_log_links: the kubelet's /var/log/containers symlinks into our pod logs.
clean_legacy_log_links() {
  [[ -d "$LEGACY_LOG_DIR" ]] || { rm -f "$LEGACY_LOG_MARKER"; return 0; }
  local l target pods
  pods=$(realpath -m "$POD_LOGS_DIR")
  for l in "$LEGACY_LOG_DIR"/*; do
    [[ -L "$l" ]] || continue
    target=$(readlink "$l")
    if [[ "$target" == "$POD_LOGS_DIR"/* || "$target" == "$pods"/* ]]; then rm -f "$l"; fi
  done
  if [[ -f "$LEGACY_LOG_MARKER" ]] && rmdir "$LEGACY_LOG_DIR" 2>/dev/null; then
    rm -f "$LEGACY_LOG_MARKER"
  fi
}

down() {
  local t0=$SECONDS name api=0
  name=$(cat "$NODE_NAME_FILE" 2>/dev/null || echo "$REF_NODE")
  if load_env && api_up; then api=1; else log "API server not reachable: skipping the API steps"; fi

  if (( api )) && kc get node "$name" >/dev/null 2>&1; then
    # No new pods while it goes; nothing is drained.
    kc cordon "$name" >/dev/null 2>&1 || true
  fi
  (( api )) && force_delete_pods "$name"

  stop_bg "$PIDNAME" 30
  "$(runtime_script "${CONTAINER_RUNTIME:-containerd}")" stop ref

  if (( api )); then
    if kc get node "$name" >/dev/null 2>&1; then
      log "deleting node $name"
      kc delete node "$name" --ignore-not-found >/dev/null
    fi
    force_delete_pods "$name"
  fi

  unmount_under "$REF_DIR"
  if [[ -n "$(mounts_under "$REF_DIR")" ]]; then
    log "WARNING: still mounted under $REF_DIR, keeping its files: $(mounts_under "$REF_DIR" | tr '\n' ' ')"
  else
    rm -rf --one-file-system "$ROOT_DIR" "$POD_LOGS_DIR" "$SYSCTL_DIR"
  fi
  remove_cgroups
  clean_legacy_log_links
  rm -f "$NODE_NAME_FILE"
  log "reference node $name down in $((SECONDS - t0))s"
}

status() {
  local name
  name=$(cat "$NODE_NAME_FILE" 2>/dev/null || echo "$REF_NODE")
  if ! is_running "$PIDNAME"; then log "reference kubelet is not running"; return 1; fi
  load_env || { log "no $ENV_FILE: the stack is down"; return 1; }
  if node_ready "$name"; then
    log "reference kubelet running (pid $(pid_of "$PIDNAME")), node $name Ready"
    return 0
  fi
  log "reference kubelet running (pid $(pid_of "$PIDNAME")) but node $name is not Ready"
  return 1
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) status ;;
  __exec-kubelet) shift; exec_kubelet "$@" ;;
  *) usage ;;
esac
