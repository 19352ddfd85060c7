#!/usr/bin/env bash
# Runs CRI-O as a private, per-instance CRI runtime (no systemd), the second real runtime next to
# containerd (hack/containerd.sh).
#
#   hack/crio.sh install|start|stop [--purge]|status|config|env FILE [INSTANCE]
#
# CRI-O $CRIO_VERSION and its pinns (hack/build-crio.sh), Debian's conmon as the container monitor,
# runtime handlers "runc" (default; runc $RUNC_VERSION of hack/build-containerd.sh) and "crun"
# (Debian's crun), both through wrappers with this VM's fixes (hack/lib/oci-wrapper.sh).
#
# INSTANCE is "vk" (default) or "ref" (for a reference upstream kubelet). Each instance has its own
# dir crio-INSTANCE/ under $VKCRI_CRIO_RUN_DIR (default: $RUNTIME_STACK_DIR, beside the containerd
# instances) with its config (crio.conf, the drop-in crio.conf.d/10-vk-cri.conf, registries.conf,
# policy.json, storage.conf), the CRI socket runtime.sock, run root, runtime state, exit files,
# attach sockets, namespaces, CNI config and IPAM data, its PID file and log
# (crio-INSTANCE.{pid,log}); its storage root (crio-INSTANCE/storage, or
# $VKCRI_CRIO_STORAGE_DIR/crio-INSTANCE) and its bridge (vk: vkcrio0 10.90.0.0/16, ref:
# vkcrioref0 10.91.0.0/16; see crio_instance in hack/lib/common.sh). Nothing under /etc or
# /var/lib/containers is read or written.
#
#   install  apt-get installs conmon, crun, the CNI plugins, busybox-static and iptables if
#            missing, builds CRI-O, runc and crictl (cached in $CACHE_DIR/bin).
#   start    writes the config, creates the bridge, starts crio, waits for the socket.
#   stop     removes this instance's pods through CRI, stops crio, kills leftover conmon and
#            containers of its runtime roots, unmounts what is mounted under its dirs, removes its
#            bridge. --purge also removes its dirs (and its storage).
#   status   exits 0 iff the instance's CRI socket answers.
#   config   only writes the config files and prints the path of the drop-in.
#   env FILE writes FILE: the stack's env ($STACK_DIR/env) with CRI_ENDPOINT, NODE_IP, POD_SUBNET
#            of this instance, REF_* of the "ref" instance and CONTAINER_RUNTIME=crio, for a vk-cri
#            node and a reference kubelet (hack/node.sh, hack/ref.sh and test/e2e
#            read VKCRI_STACK_ENV) on this CRI-O next to a stack that runs containerd.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/oci-wrapper.sh"

usage() { echo "usage: $0 install|start|stop [--purge]|status|config|env FILE [INSTANCE]" >&2; exit 2; }

cmd=${1:-}; shift || true
purge=0
args=()
for a in "$@"; do
  case "$a" in
    --purge) purge=1 ;;
    -*) usage ;;
    *) args+=("$a") ;;
  esac
done
env_file=
if [[ "$cmd" == env ]]; then
  env_file=${args[0]:-}
  [[ -n "$env_file" ]] || usage
  args=("${args[@]:1}")
fi
crio_instance "${args[0]:-vk}"
# The stack's env (for env), then this instance's PID file and log in its own dir (start_bg,
# stop_bg), whether it lives under the stack dir or not.
STACK_ENV_FILE="$STACK_DIR/env"
STACK_DIR=$CRIO_DIR
LOG_DIR=$CRIO_DIR

CRIO="$CRIO_BIN_DIR/crio"
PINNS="$CRIO_BIN_DIR/pinns"
CONMON=/usr/bin/conmon
RUNC="$RUNC_BIN_DIR/runc"
CRUN=/usr/bin/crun
CONF_DIR="$CRIO_DIR/crio.conf.d"
DROP_IN="$CONF_DIR/10-vk-cri.conf"
RUN_ROOT="$CRIO_DIR/runroot"
RUNC_WRAPPER="$CRIO_DIR/runc"
CRUN_WRAPPER="$CRIO_DIR/crun"
RUNC_ROOT="$CRIO_DIR/state/runc"
CRUN_ROOT="$CRIO_DIR/state/crun"
CNI_CONF_DIR="$CRIO_DIR/cni/net.d"
IPAM_DIR="$CRIO_DIR/cni/ipam"
CRICTL_CONFIG="$CRIO_DIR/crictl.yaml"

# cri ARGS...: crictl against this instance (its config also serves people:
# crictl --config $RUNTIME_STACK_DIR/crio-INSTANCE/crictl.yaml ps).
cri() {
  if ! grep -qxF "runtime-endpoint: $CRIO_ENDPOINT" "$CRICTL_CONFIG" 2>/dev/null; then
    mkdir -p "$CRIO_DIR"
    printf 'runtime-endpoint: %s\nimage-endpoint: %s\ntimeout: 30\n' "$CRIO_ENDPOINT" "$CRIO_ENDPOINT" >"$CRICTL_CONFIG"
  fi
  "$CRICTL" --config "$CRICTL_CONFIG" "$@"
}

socket_answers() { [[ -S "$CRIO_SOCK" ]] && cri version >/dev/null 2>&1; }

# --- install ----------------------------------------------------------------------------------

install() {
  local missing=()
  [[ -x "$CONMON" ]] || missing+=(conmon)
  [[ -x "$CRUN" ]] || missing+=(crun)
  [[ -x "$CNI_BIN_DIR/bridge" && -x "$CNI_BIN_DIR/host-local" && -x "$CNI_BIN_DIR/loopback" && -x "$CNI_BIN_DIR/portmap" ]] \
    || missing+=(containernetworking-plugins)
  dpkg -s busybox-static >/dev/null 2>&1 || missing+=(busybox-static)
  command -v iptables >/dev/null || missing+=(iptables)
  if (( ${#missing[@]} )); then
    log "installing ${missing[*]} with apt-get"
    phase_begin "apt-get install ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
    phase_end "apt-get install ${missing[*]}"
  fi
  # runc (and containerd, which the stack's control plane tests use anyway) and crictl.
  "$HACK_DIR/build-containerd.sh"
  "$HACK_DIR/build-crio.sh"
  # crictl is built by hack/containerd.sh install (no containerd is started by it).
  [[ -x "$CRICTL" ]] || "$HACK_DIR/containerd.sh" install vk
}

# --- config -----------------------------------------------------------------------------------

write_config() {
  mkdir -p "$CONF_DIR" "$CRIO_STORAGE" "$RUN_ROOT" "$RUNC_ROOT" "$CRUN_ROOT" "$CNI_CONF_DIR" "$IPAM_DIR" \
           "$CRIO_DIR/exits" "$CRIO_DIR/attach" "$CRIO_DIR/ns" "$CRIO_DIR/registries.conf.d" \
           "$CRIO_DIR/policies" "$CRIO_DIR/auth" "$CRIO_DIR/keys" "$CRIO_DIR/tmp" "$CRIO_DIR/logs"
  write_oci_wrapper "$RUNC_WRAPPER" "$RUNC" hack/crio.sh clamp-oom
  write_oci_wrapper "$CRUN_WRAPPER" "$CRUN" hack/crio.sh clamp-oom
  # The main config file is ours and empty, so that /etc/crio/crio.conf is never read; all the
  # settings are in the drop-in.
  printf '# Generated by hack/crio.sh: settings are in %s.\n' "$DROP_IN" >"$CRIO_DIR/crio.conf"
  local tmp
  tmp=$(mktemp "$CONF_DIR/.conf.XXXXXX")
  write_drop_in >"$tmp"
  mv "$tmp" "$DROP_IN"
  write_registries
  # containers/image: accept any image (no signatures on the local registry's images).
  printf '{"default": [{"type": "insecureAcceptAnything"}]}\n' >"$CRIO_DIR/policy.json"
  # containers/storage: CRI-O passes its own root, run root and driver; this file only keeps
  # /etc/containers/storage.conf out.
  printf '[storage]\ndriver = "overlay"\nrunroot = "%s"\ngraphroot = "%s"\n' "$RUN_ROOT" "$CRIO_STORAGE" >"$CRIO_DIR/storage.conf"
  write_cni
}

# write_drop_in: the CRI-O settings (keys as in pkg/config/config.go of CRI-O v1.36; unset keys
# keep CRI-O's defaults). Paths CRI-O would otherwise take under /etc, /var/lib, /var/run and
# /var/log are this instance's.
write_drop_in() {
  cat <<EOF
# Generated by hack/crio.sh for instance "$CRIO_INSTANCE". Do not edit.
[crio]
root = "$CRIO_STORAGE"
runroot = "$RUN_ROOT"
storage_driver = "overlay"
log_dir = "$CRIO_DIR/logs"
version_file = "$CRIO_DIR/version"
version_file_persist = "$CRIO_STORAGE/version"
clean_shutdown_file = "$CRIO_STORAGE/clean.shutdown"

[crio.api]
listen = "$CRIO_SOCK"
stream_address = "127.0.0.1"
stream_port = "0"
# exec/attach/port-forward streams idle this long are closed; vk-cri's
# --streaming-connection-idle-timeout (4h) must not be cut short by the runtime.
stream_idle_timeout = "${STREAM_IDLE_TIMEOUT:-4h0m0s}"

[crio.runtime]
default_runtime = "runc"
# No systemd here: cgroupfs, and conmon in the pod's cgroup (the only choice with cgroupfs).
# CRI-O's RuntimeConfig RPC reports this driver to the kubelet.
cgroup_manager = "cgroupfs"
selinux = false
log_to_journald = false
# CRI container events (GetContainerEvents), which the kubelet's evented PLEG consumes.
enable_pod_events = true
pinns_path = "$PINNS"
namespaces_dir = "$CRIO_DIR/ns"
container_exits_dir = "$CRIO_DIR/exits"
container_attach_socket_dir = "$CRIO_DIR/attach"
decryption_keys_path = "$CRIO_DIR/keys"
hooks_dir = []
cdi_spec_dirs = []
default_mounts_file = ""
irqbalance_config_file = ""
irqbalance_config_restore_file = "disable"
rdt_config_file = ""
blockio_config_file = ""

# Handler "runc" (default) and RuntimeClass handler "crun", both through wrappers (see
# hack/lib/oci-wrapper.sh: oom_score_adj clamp; crun 1.8's ociVersion and hybrid cgroups).
[crio.runtime.runtimes.runc]
runtime_path = "$RUNC_WRAPPER"
runtime_type = "oci"
runtime_root = "$RUNC_ROOT"
monitor_path = "$CONMON"
monitor_cgroup = "pod"

[crio.runtime.runtimes.crun]
runtime_path = "$CRUN_WRAPPER"
runtime_type = "oci"
runtime_root = "$CRUN_ROOT"
monitor_path = "$CONMON"
monitor_cgroup = "pod"

[crio.image]
pause_image = "$PAUSE_IMAGE"
signature_policy = "$CRIO_DIR/policy.json"
signature_policy_dir = "$CRIO_DIR/policies"
namespaced_auth_dir = "$CRIO_DIR/auth"
global_auth_file = ""
big_files_temporary_dir = "$CRIO_DIR/tmp"
# Unqualified names resolve through registries.conf (docker.io, redirected to the local registry).
short_name_mode = "disabled"

[crio.network]
cni_default_network = "$CRIO_CNI_NETWORK"
network_dir = "$CNI_CONF_DIR"
plugin_dirs = ["$CNI_BIN_DIR"]

[crio.metrics]
enable_metrics = false

[crio.tracing]
enable_tracing = false

[crio.nri]
enable_nri = false
EOF
}

# write_registries: the local registry over plain http; registry.k8s.io, docker.io and gcr.io are
# served by it (offline stand-ins of the test images under the same repository paths, as
# hack/containerd.sh's hosts.toml redirects do). REGISTRY_REDIRECTS="" writes none.
write_registries() {
  {
    printf '# Generated by hack/crio.sh. Do not edit.\n'
    printf 'unqualified-search-registries = ["docker.io"]\nshort-name-mode = "disabled"\n\n'
    printf '[[registry]]\nlocation = "127.0.0.1:%s"\ninsecure = true\n' "$REGISTRY_PORT"
    local reg
    for reg in ${REGISTRY_REDIRECTS-registry.k8s.io docker.io gcr.io}; do
      printf '\n[[registry]]\nprefix = "%s"\nlocation = "127.0.0.1:%s"\ninsecure = true\n' "$reg" "$REGISTRY_PORT"
    done
  } >"$CRIO_DIR/registries.conf"
}

write_cni() {
  cat >"$CNI_CONF_DIR/10-$CRIO_CNI_NETWORK.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "$CRIO_CNI_NETWORK",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$CRIO_BRIDGE",
      "isGateway": false,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$IPAM_DIR",
        "ranges": [[{"subnet": "$CRIO_SUBNET", "gateway": "$CRIO_GATEWAY"}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    },
    {
      "type": "portmap",
      "capabilities": {"portMappings": true}
    }
  ]
}
EOF
}

ensure_bridge() {
  if ! ip link show "$CRIO_BRIDGE" >/dev/null 2>&1; then
    log "creating bridge $CRIO_BRIDGE with $CRIO_GATEWAY/${CRIO_SUBNET#*/}"
    ip link add "$CRIO_BRIDGE" type bridge
  fi
  if ! ip -4 -o addr show dev "$CRIO_BRIDGE" | grep -qw "inet $CRIO_GATEWAY/${CRIO_SUBNET#*/}"; then
    ip addr add "$CRIO_GATEWAY/${CRIO_SUBNET#*/}" dev "$CRIO_BRIDGE"
  fi
  ip link set "$CRIO_BRIDGE" up
}

# --- start ------------------------------------------------------------------------------------

start() {
  [[ -x "$CRIO" && -x "$PINNS" ]] || die "CRI-O $CRIO_VERSION is not built: run $0 install"
  [[ -x "$CONMON" && -x "$RUNC" ]] || die "conmon or runc missing: run $0 install"
  if is_running "$CRIO_PIDNAME" && socket_answers; then
    log "CRI-O ($CRIO_INSTANCE) already running, pid $(pid_of "$CRIO_PIDNAME"), socket $CRIO_SOCK"
    ensure_bridge
    return 0
  fi
  if ! is_running "$CRIO_PIDNAME"; then
    write_config
    ensure_bridge
    rm -f "$CRIO_SOCK"
    log "starting CRI-O ($CRIO_INSTANCE): config $DROP_IN, log $LOG_DIR/$CRIO_PIDNAME.log"
    start_crio
  fi
  if ! wait_for "CRI-O ($CRIO_INSTANCE) socket" 60 socket_answers; then
    tail -n 20 "$LOG_DIR/$CRIO_PIDNAME.log" >&2 || true
    die "CRI-O ($CRIO_INSTANCE) did not come up"
  fi
  log "CRI-O ($CRIO_INSTANCE) ready, pid $(pid_of "$CRIO_PIDNAME"): $(cri version 2>/dev/null | sed -n 's/^RuntimeVersion: *//p')"
}

start_crio() {
  start_bg "$CRIO_PIDNAME" env CONTAINERS_STORAGE_CONF="$CRIO_DIR/storage.conf" \
    CONTAINERS_REGISTRIES_CONF="$CRIO_DIR/registries.conf" \
    "$CRIO" --config "$CRIO_DIR/crio.conf" --config-dir "$CONF_DIR" \
    --registries-conf "$CRIO_DIR/registries.conf" --registries-conf-dir "$CRIO_DIR/registries.conf.d"
}

# --- stop -------------------------------------------------------------------------------------

# instance_conmons: PIDs of conmon processes of this instance (their command lines name its
# exit dir).
instance_conmons() {
  local p exe
  for p in /proc/[0-9]*; do
    exe=$(readlink "$p/exe" 2>/dev/null) || continue
    [[ "$exe" == */conmon ]] || continue
    if tr '\0' '\n' <"$p/cmdline" 2>/dev/null | grep -qF -- "$CRIO_DIR/"; then echo "${p#/proc/}"; fi
  done
}

remove_pods() {
  local pods
  pods=$(cri pods -q 2>/dev/null | wc -l) || pods=0
  if (( pods > 0 )); then
    log "removing $pods pod sandbox(es) of CRI-O ($CRIO_INSTANCE)"
    cri rmp --all --force >/dev/null 2>&1 || log "  crictl rmp failed; cleaning up by hand"
  fi
  if [[ -n "$(cri ps -aq 2>/dev/null)" ]]; then
    cri rm --all --force >/dev/null 2>&1 || true
  fi
}

kill_leftovers() {
  local rt bin root id conmons=()
  for rt in "$RUNC:$RUNC_ROOT" "$CRUN_WRAPPER:$CRUN_ROOT"; do
    bin=${rt%%:*} root=${rt#*:}
    [[ -x "$bin" && -d "$root" ]] || continue
    for id in $("$bin" --root "$root" list -q 2>/dev/null); do
      log "killing leftover container $id ($(basename "$bin"))"
      "$bin" --root "$root" kill "$id" KILL 2>/dev/null || true
      "$bin" --root "$root" delete --force "$id" 2>/dev/null || true
    done
  done
  # A crio of this instance that the PID file does not name (started by hand, or its PID file
  # lost) would keep the socket and storage busy.
  local p exe
  for p in /proc/[0-9]*; do
    exe=$(readlink "$p/exe" 2>/dev/null) || continue
    [[ "$exe" == "$CRIO" ]] || continue
    if tr '\0' '\n' <"$p/cmdline" 2>/dev/null | grep -qxF -- "$CRIO_DIR/crio.conf"; then
      log "killing a leftover crio of instance $CRIO_INSTANCE: ${p#/proc/}"
      kill -KILL "${p#/proc/}" 2>/dev/null || true
    fi
  done
  mapfile -t conmons < <(instance_conmons)
  if (( ${#conmons[@]} )); then
    log "killing leftover conmon processes of CRI-O ($CRIO_INSTANCE): ${conmons[*]}"
    kill -KILL "${conmons[@]}" 2>/dev/null || true
  fi
}

remove_bridge() {
  local port
  for port in $(ip -o link show master "$CRIO_BRIDGE" 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1); do
    ip link del "$port" 2>/dev/null || true
  done
  if ip link show "$CRIO_BRIDGE" >/dev/null 2>&1; then
    log "removing bridge $CRIO_BRIDGE"
    ip link del "$CRIO_BRIDGE"
  fi
}

stop() {
  if [[ -x "$CRICTL" ]] && ! socket_answers && [[ -n "$(instance_conmons)" && -f "$DROP_IN" ]]; then
    # Pods left by a CRI-O that crashed: start it again briefly to tear them down through CRI,
    # which also releases their network (CNI DEL).
    log "CRI-O ($CRIO_INSTANCE) is down but its containers run: starting it to clean up its pods"
    rm -f "$CRIO_SOCK"
    start_crio
    wait_for "CRI-O ($CRIO_INSTANCE) socket" 60 socket_answers || true
  fi
  if [[ -x "$CRICTL" ]] && socket_answers; then remove_pods; fi
  if is_running "$CRIO_PIDNAME"; then
    stop_bg "$CRIO_PIDNAME" 30
  else
    log "CRI-O ($CRIO_INSTANCE) is not running"
  fi
  rm -f "$CRIO_SOCK"
  kill_leftovers
  unmount_under "$CRIO_DIR"
  unmount_under "$CRIO_STORAGE"
  rm -rf "$IPAM_DIR"
  rm -f /var/lib/cni/results/"$CRIO_CNI_NETWORK"-* 2>/dev/null || true
  remove_bridge
  if (( purge )); then
    log "removing $CRIO_DIR and $CRIO_STORAGE"
    rm -rf --one-file-system "$CRIO_DIR" "$CRIO_STORAGE"
  fi
  log "CRI-O ($CRIO_INSTANCE) stopped"
}

write_env() {
  local src=$STACK_ENV_FILE tmp
  [[ -f "$src" ]] || die "no $src: run hack/stack-up.sh first"
  mkdir -p "$(dirname "$env_file")"
  tmp=$(mktemp "$(dirname "$env_file")/.env.XXXXXX")
  grep -vE '^(CRI_ENDPOINT|NODE_IP|POD_SUBNET|REF_CRI_ENDPOINT|REF_NODE_IP|REF_POD_SUBNET|CONTAINER_RUNTIME)=' "$src" >"$tmp"
  printf 'CRI_ENDPOINT=%s\nNODE_IP=%s\nPOD_SUBNET=%s\n' "$CRIO_ENDPOINT" "$CRIO_GATEWAY" "$CRIO_SUBNET" >>"$tmp"
  # The reference kubelet's runtime (hack/ref.sh with VKCRI_STACK_ENV): the "ref" instance.
  crio_instance ref
  printf 'REF_CRI_ENDPOINT=%s\nREF_NODE_IP=%s\nREF_POD_SUBNET=%s\nCONTAINER_RUNTIME=crio\n' \
    "$CRIO_ENDPOINT" "$CRIO_GATEWAY" "$CRIO_SUBNET" >>"$tmp"
  chmod 644 "$tmp"
  mv "$tmp" "$env_file"
  log "wrote $env_file (CRI-O vk and ref under ${VKCRI_CRIO_RUN_DIR:-$RUNTIME_STACK_DIR})"
}

case "$cmd" in
  install) install ;;
  config) write_config; echo "$DROP_IN" ;;
  start) start ;;
  stop) stop ;;
  status)
    if socket_answers; then
      log "CRI-O ($CRIO_INSTANCE) is up: pid $(pid_of "$CRIO_PIDNAME" || echo '?'), socket $CRIO_SOCK"
      exit 0
    fi
    log "CRI-O ($CRIO_INSTANCE) is down"
    exit 1
    ;;
  env) write_env ;;
  *) usage ;;
esac
