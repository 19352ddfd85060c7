#!/usr/bin/env bash
# Runs containerd as a private, per-instance CRI runtime (no systemd).
#
#   hack/containerd.sh install|start|stop [--purge]|kill|status|config [INSTANCE]
#
# Two lanes, chosen by VKCRI_CONTAINERD for both instances:
#   2    (default) containerd $CONTAINERD2_VERSION and runc $RUNC_VERSION, built and cached by
#        hack/build-containerd.sh, with a version 3 config; runtime handlers "runc" (default) and
#        "crun" (Debian's crun).
#   1.6  Debian's containerd 1.6 and runc 1.1, with a version 2 config; handler "runc" only.
# start records the lane in $STACK_DIR/containerd-INSTANCE/lane; stop, kill, status and a start
# while the instance (or its shims) still runs use the recorded lane. Each lane has its own
# metadata root (root/ for 1.6, root-2/ for 2): 1.6 cannot be expected to read what 2.x wrote.
#
# INSTANCE is "vk" (default; the vk-cri node) or "ref" (a reference upstream kubelet). Each
# instance has its own dirs $STACK_DIR/containerd-INSTANCE/{root,state,config.toml,containerd.sock},
# its own runc root, CNI conf dir, IPAM data dir and bridge (vk: vkcri0 10.88.0.0/16,
# ref: vkref0 10.89.0.0/16).
#
#   install  apt-get installs containerd, runc, CNI plugins, busybox-static and iptables if
#            missing, and builds crictl (cached in $CACHE_DIR/bin).
#   start    writes the config, creates the bridge, starts containerd, waits for the socket.
#   stop     removes this instance's pods through CRI, stops containerd and any of its shims
#            left over, unmounts what is mounted under its dirs, removes its bridge (and the
#            CNI-* iptables chains when no other instance runs). --purge also removes its dirs.
#   kill     SIGKILLs only the containerd daemon (as in a crash): shims and pods keep running;
#            a later "start" picks them up again.
#   status   exits 0 iff the instance's CRI socket answers.
#   config   only writes the config files (config.toml, hosts.toml redirects, CNI conflist) for
#            the requested lane and prints the path of config.toml: nothing is started.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/oci-wrapper.sh"

usage() { echo "usage: $0 install|start|stop [--purge]|kill|status [INSTANCE]" >&2; exit 2; }

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
containerd_instance "${args[0]:-vk}"

RUNC_ROOT="$CTRD_DIR/state/runc"
CRUN_ROOT="$CTRD_DIR/state/crun"
# The crun handler's BinaryName: a wrapper around Debian's crun (write_crun_wrapper).
CRUN_WRAPPER="$CTRD_DIR/crun"
CNI_CONF_DIR="$CTRD_DIR/cni/net.d"
IPAM_DIR="$CTRD_DIR/cni/ipam"
CERTS_DIR="$CTRD_DIR/certs.d"
CNI_NETWORK=$CTRD_CNI_NETWORK
LANE_FILE="$CTRD_DIR/lane"

# lane_root: the metadata root of the current lane.
lane_root() {
  if [[ "$CTRD_LANE" == 1.6 ]]; then echo "$CTRD_DIR/root"; else echo "$CTRD_DIR/root-$CTRD_LANE"; fi
}

CRICTL_CONFIG="$CTRD_DIR/crictl.yaml"

# cri ARGS...: crictl against this instance (its config file also serves people:
# crictl --config $STACK_DIR/containerd-INSTANCE/crictl.yaml ps).
cri() {
  if [[ ! -f "$CRICTL_CONFIG" ]]; then
    mkdir -p "$CTRD_DIR"
    printf 'runtime-endpoint: %s\nimage-endpoint: %s\ntimeout: 10\n' "$CTRD_ENDPOINT" "$CTRD_ENDPOINT" >"$CRICTL_CONFIG"
  fi
  "$CRICTL" --config "$CRICTL_CONFIG" "$@"
}

socket_answers() {
  [[ -S "$CTRD_SOCK" ]] || return 1
  if [[ -x "$CRICTL" ]]; then
    cri version >/dev/null 2>&1
  else
    "$CTRD_CTR" --address "$CTRD_SOCK" version >/dev/null 2>&1
  fi
}

# --- install ----------------------------------------------------------------------------------

install_packages() {
  local missing=()
  if [[ "$CTRD_LANE" == 1.6 ]]; then
    [[ -x /usr/bin/containerd && -x /usr/bin/containerd-shim-runc-v2 ]] || missing+=(containerd)
    [[ -x /usr/bin/runc ]] || missing+=(runc)
  else
    [[ -x /usr/bin/crun ]] || missing+=(crun)
  fi
  [[ -x "$CNI_BIN_DIR/bridge" && -x "$CNI_BIN_DIR/host-local" && -x "$CNI_BIN_DIR/loopback" && -x "$CNI_BIN_DIR/portmap" ]] \
    || missing+=(containernetworking-plugins)
  dpkg -s busybox-static >/dev/null 2>&1 || missing+=(busybox-static)
  command -v iptables >/dev/null || missing+=(iptables)
  if (( ${#missing[@]} == 0 )); then
    log "the packages of containerd lane $CTRD_LANE, CNI plugins, busybox-static and iptables are installed"
    return
  fi
  log "installing ${missing[*]} with apt-get"
  phase_begin "apt-get install ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
  phase_end "apt-get install ${missing[*]}"
  # The Debian package would start containerd through systemd/init scripts; we run our own.
}

build_crictl() {
  [[ -x "$CRICTL" ]] && return 0
  log "building crictl $CRI_TOOLS_VERSION from the Go module proxy into $CRICTL"
  phase_begin "building crictl $CRI_TOOLS_VERSION"
  local dir src
  dir=$(GOFLAGS='' go mod download -json "sigs.k8s.io/cri-tools@$CRI_TOOLS_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
  [[ -n "$dir" && -d "$dir" ]] || die "could not download sigs.k8s.io/cri-tools@$CRI_TOOLS_VERSION"
  # Build in a writable copy: -mod=mod may need to touch go.mod/go.sum.
  src="$CACHE_DIR/src/cri-tools-$CRI_TOOLS_VERSION"
  if [[ ! -f "$src/go.mod" ]]; then
    rm -rf "$src.tmp"; mkdir -p "$(dirname "$src")"
    cp -r "$dir" "$src.tmp"; chmod -R u+w "$src.tmp"; rm -rf "$src.tmp/vendor"
    mv "$src.tmp" "$src"
  fi
  mkdir -p "$(dirname "$CRICTL")"
  (cd "$src" && GOFLAGS=-mod=mod CGO_ENABLED=0 GOTOOLCHAIN=local go build -trimpath \
      -ldflags "-s -w -X sigs.k8s.io/cri-tools/pkg/version.Version=$CRI_TOOLS_VERSION" \
      -o "$CRICTL.tmp" ./cmd/crictl) || die "building crictl failed"
  mv "$CRICTL.tmp" "$CRICTL"
  phase_end "building crictl $CRI_TOOLS_VERSION"
  ln -sfn "$(basename "$CRICTL")" "$CACHE_DIR/bin/crictl"
  log "crictl ready: $("$CRICTL" --version)"
}

# --- start ------------------------------------------------------------------------------------

write_config() {
  mkdir -p "$(lane_root)" "$CTRD_DIR/state" "$CTRD_DIR/opt" "$RUNC_ROOT" "$CNI_CONF_DIR" "$IPAM_DIR" \
           "$CERTS_DIR/127.0.0.1:$REGISTRY_PORT"
  [[ -z "$CTRD_CRUN" ]] || mkdir -p "$CRUN_ROOT"
  local tmp
  tmp=$(mktemp "$CTRD_DIR/.config.XXXXXX")
  if [[ "$CTRD_LANE" == 1.6 ]]; then write_config_v2 >"$tmp"; else write_config_v3 >"$tmp"; fi
  mv "$tmp" "$CTRD_DIR/config.toml"
  [[ -z "$CTRD_CRUN" ]] || write_crun_wrapper
  write_hosts_and_cni
}

# write_crun_wrapper: the crun handler runs Debian 12's crun through $CRUN_WRAPPER, which works
# around its refusals on this VM (write_oci_wrapper, hack/lib/oci-wrapper.sh). containerd clamps
# oom_score_adj itself (restrict_oom_score_adj), so the wrapper does not.
write_crun_wrapper() { write_oci_wrapper "$CRUN_WRAPPER" "$CTRD_CRUN" hack/containerd.sh; }

# write_config_v2: containerd 1.6's config (version 2, CRI plugin io.containerd.grpc.v1.cri).
write_config_v2() {
  cat <<EOF
# Generated by hack/containerd.sh for instance "$CTRD_INSTANCE", lane 1.6. Do not edit.
version = 2
root = "$(lane_root)"
state = "$CTRD_DIR/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs", "io.containerd.internal.v1.tracing", "io.containerd.tracing.processor.v1.otlp"]

[grpc]
  address = "$CTRD_SOCK"

[ttrpc]
  address = "$CTRD_SOCK.ttrpc"

[plugins."io.containerd.internal.v1.opt"]
  path = "$CTRD_DIR/opt"

[plugins."io.containerd.grpc.v1.cri"]
  # Root here lacks CAP_SYS_RESOURCE: runc must not try to lower oom_score_adj below ours.
  restrict_oom_score_adj = true
  sandbox_image = "127.0.0.1:$REGISTRY_PORT/vk-cri/pause:3.10"
  # Network namespaces under this instance's state dir (not /var/run/netns), so stop finds them.
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  # exec/attach/port-forward streams idle this long are closed; vk-cri's
  # --streaming-connection-idle-timeout (4h) must not be cut short by the runtime.
  stream_idle_timeout = "${STREAM_IDLE_TIMEOUT:-4h0m0s}"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        # A runc state dir of our own, so leftovers of this instance can be found and killed.
        Root = "$RUNC_ROOT"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$CNI_BIN_DIR"
    conf_dir = "$CNI_CONF_DIR"
    max_conf_num = 1
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "$CERTS_DIR"
EOF
}

# write_config_v3: containerd 2.x's config (version 3: the CRI plugin is split into
# io.containerd.cri.v1.images, io.containerd.cri.v1.runtime and the server part
# io.containerd.grpc.v1.cri; keys as in internal/cri/config/config.go of containerd v2.4, which
# migrates version 3 to its version 4 by itself). The settings are those of write_config_v2.
write_config_v3() {
  local images="plugins.'io.containerd.cri.v1.images'" runtime="plugins.'io.containerd.cri.v1.runtime'"
  cat <<EOF
# Generated by hack/containerd.sh for instance "$CTRD_INSTANCE", lane $CTRD_LANE. Do not edit.
version = 3
root = "$(lane_root)"
state = "$CTRD_DIR/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.blockfile", "io.containerd.snapshotter.v1.erofs", "io.containerd.internal.v1.tracing", "io.containerd.tracing.processor.v1.otlp"]

[grpc]
  address = "$CTRD_SOCK"

[ttrpc]
  address = "$CTRD_SOCK.ttrpc"

[plugins.'io.containerd.internal.v1.opt']
  path = "$CTRD_DIR/opt"

[$images]
  snapshotter = "overlayfs"
  [$images.pinned_images]
    # Version 2's sandbox_image.
    sandbox = "127.0.0.1:$REGISTRY_PORT/vk-cri/pause:3.10"
  [$images.registry]
    config_path = "$CERTS_DIR"

[$runtime]
  # Root here lacks CAP_SYS_RESOURCE: runc must not try to lower oom_score_adj below ours.
  restrict_oom_score_adj = true
  # Network namespaces under this instance's state dir (not /var/run/netns), so stop finds them.
  netns_mounts_under_state_dir = true
  [$runtime.containerd]
    default_runtime_name = "runc"
    [$runtime.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [$runtime.containerd.runtimes.runc.options]
        BinaryName = "$CTRD_RUNC"
        # cgroupfs: no systemd here. containerd's RuntimeConfig reports this driver to the kubelet.
        SystemdCgroup = false
        # A runc state dir of our own, so leftovers of this instance can be found and killed.
        Root = "$RUNC_ROOT"
    # RuntimeClass handler "crun": the same shim with Debian's crun as the OCI runtime (through
    # a wrapper, see write_crun_wrapper).
    [$runtime.containerd.runtimes.crun]
      runtime_type = "io.containerd.runc.v2"
      [$runtime.containerd.runtimes.crun.options]
        BinaryName = "$CRUN_WRAPPER"
        SystemdCgroup = false
        Root = "$CRUN_ROOT"
  [$runtime.cni]
    bin_dirs = ["$CNI_BIN_DIR"]
    conf_dir = "$CNI_CONF_DIR"
    max_conf_num = 1

[plugins.'io.containerd.grpc.v1.cri']
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  # exec/attach/port-forward streams idle this long are closed; vk-cri's
  # --streaming-connection-idle-timeout (4h) must not be cut short by the runtime.
  stream_idle_timeout = "${STREAM_IDLE_TIMEOUT:-4h0m0s}"
EOF
}

# write_hosts_and_cni: the registry hosts.toml files and the CNI conflist (both lanes).
write_hosts_and_cni() {
  # The local registry speaks plain http on loopback.
  cat >"$CERTS_DIR/127.0.0.1:$REGISTRY_PORT/hosts.toml" <<EOF
server = "http://127.0.0.1:$REGISTRY_PORT"

[host."http://127.0.0.1:$REGISTRY_PORT"]
  capabilities = ["pull", "resolve", "push"]
EOF

  # No internet: registry.k8s.io, docker.io and gcr.io are redirected to the local registry, which
  # serves offline stand-ins of the e2e test images under the same repository paths once
  # hack/conformance.sh has pushed them (registry.k8s.io/pause:3.10.2 -> 127.0.0.1:5000/pause:3.10.2).
  # containerd reads these files at each pull. REGISTRY_REDIRECTS="" writes none.
  local reg
  for reg in ${REGISTRY_REDIRECTS-registry.k8s.io docker.io gcr.io}; do
    mkdir -p "$CERTS_DIR/$reg"
    cat >"$CERTS_DIR/$reg/hosts.toml" <<EOF
# $reg is served by the local registry (offline stand-ins of the test images).
server = "http://127.0.0.1:$REGISTRY_PORT"

[host."http://127.0.0.1:$REGISTRY_PORT"]
  capabilities = ["pull", "resolve"]
EOF
  done

  cat >"$CNI_CONF_DIR/10-$CNI_NETWORK.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "$CNI_NETWORK",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$CTRD_BRIDGE",
      "isGateway": false,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$IPAM_DIR",
        "ranges": [[{"subnet": "$CTRD_SUBNET", "gateway": "$CTRD_GATEWAY"}]],
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
  if ! ip link show "$CTRD_BRIDGE" >/dev/null 2>&1; then
    log "creating bridge $CTRD_BRIDGE with $CTRD_GATEWAY/${CTRD_SUBNET#*/}"
    ip link add "$CTRD_BRIDGE" type bridge
  fi
  if ! ip -4 -o addr show dev "$CTRD_BRIDGE" | grep -qw "inet $CTRD_GATEWAY/${CTRD_SUBNET#*/}"; then
    ip addr add "$CTRD_GATEWAY/${CTRD_SUBNET#*/}" dev "$CTRD_BRIDGE"
  fi
  ip link set "$CTRD_BRIDGE" up
}

# choose_lane: the lane to start with. A running instance, or shims left by a killed one, keep
# the lane recorded at their start; asking for another one explicitly is an error (stop first).
choose_lane() {
  local recorded=
  [[ -f "$LANE_FILE" ]] && recorded=$(<"$LANE_FILE")
  if [[ -n "$recorded" ]] && { is_running "$CTRD_PIDNAME" || [[ -n "$(instance_shims)" ]]; }; then
    if [[ "$recorded" != "$VKCRI_CONTAINERD" ]]; then
      [[ -z "$VKCRI_CONTAINERD_SET" ]] \
        || die "containerd ($CTRD_INSTANCE) runs lane $recorded, VKCRI_CONTAINERD=$VKCRI_CONTAINERD asks for another: run $0 stop $CTRD_INSTANCE first"
      log "WARNING: containerd ($CTRD_INSTANCE) runs lane $recorded (not the default $VKCRI_CONTAINERD): keeping it"
    fi
    containerd_lane "$recorded"
  else
    containerd_lane "$VKCRI_CONTAINERD"
  fi
}

start() {
  choose_lane
  [[ -x "$CTRD_CONTAINERD" ]] || die "containerd of lane $CTRD_LANE ($CTRD_CONTAINERD) is not installed: run $0 install"
  build_crictl
  if is_running "$CTRD_PIDNAME" && socket_answers; then
    log "containerd ($CTRD_INSTANCE, lane $CTRD_LANE) already running, pid $(pid_of "$CTRD_PIDNAME"), socket $CTRD_SOCK"
    ensure_bridge
    return 0
  fi
  if is_running "$CTRD_PIDNAME"; then
    log "containerd ($CTRD_INSTANCE) pid $(pid_of "$CTRD_PIDNAME") runs but does not answer yet"
  else
    write_config
    ensure_bridge
    rm -f "$CTRD_SOCK" "$CTRD_SOCK.ttrpc"
    echo "$CTRD_LANE" >"$LANE_FILE"
    log "starting containerd ($CTRD_INSTANCE, lane $CTRD_LANE): config $CTRD_DIR/config.toml, log $LOG_DIR/$CTRD_PIDNAME.log"
    start_containerd
  fi
  if ! wait_for "containerd ($CTRD_INSTANCE) socket" 30 socket_answers; then
    tail -n 20 "$LOG_DIR/$CTRD_PIDNAME.log" >&2 || true
    die "containerd ($CTRD_INSTANCE) did not come up"
  fi
  log "containerd ($CTRD_INSTANCE) ready, pid $(pid_of "$CTRD_PIDNAME"): $(cri version 2>/dev/null | sed -n 's/^RuntimeVersion: *//p')"
}

# start_containerd: the daemon of the current lane in the background, with the lane's PATH (its
# shim first).
start_containerd() {
  start_bg "$CTRD_PIDNAME" env PATH="$CTRD_PATH" "$CTRD_CONTAINERD" --config "$CTRD_DIR/config.toml"
}

# --- stop -------------------------------------------------------------------------------------

# instance_shims: PIDs of containerd-shim-runc-v2 processes serving this instance's socket.
instance_shims() {
  local p exe args
  for p in /proc/[0-9]*; do
    exe=$(readlink "$p/exe" 2>/dev/null) || continue
    [[ "$exe" == */containerd-shim* ]] || continue
    args=$(tr '\0' '\n' <"$p/cmdline" 2>/dev/null) || continue
    if grep -qxF -- "$CTRD_SOCK" <<<"$args"; then echo "${p#/proc/}"; fi
  done
}

remove_pods() {
  local pods
  pods=$(cri pods -q 2>/dev/null | wc -l) || pods=0
  if (( pods > 0 )); then
    log "removing $pods pod sandbox(es) of containerd ($CTRD_INSTANCE)"
    cri rmp --all --force >/dev/null 2>&1 || log "  crictl rmp failed; cleaning up by hand"
  fi
  # Containers outside any pod are not expected, but remove them too.
  if [[ -n "$(cri ps -aq 2>/dev/null)" ]]; then
    cri rm --all --force >/dev/null 2>&1 || true
  fi
}

kill_leftovers() {
  local shims=() ns id rt bin
  # Containers runc (or crun) still knows about in this instance's own state roots.
  for rt in "$CTRD_RUNC:$RUNC_ROOT" "$CRUN_WRAPPER:$CRUN_ROOT"; do
    bin=${rt%%:*}
    [[ -n "$bin" && -x "$bin" ]] || continue
    for ns in "${rt#*:}"/*/; do
      [[ -d "$ns" ]] || continue
      for id in $("$bin" --root "$ns" list -q 2>/dev/null); do
        log "killing leftover container $id ($(basename "$bin"))"
        "$bin" --root "$ns" kill --all "$id" KILL 2>/dev/null || true
        "$bin" --root "$ns" delete --force "$id" 2>/dev/null || true
      done
    done
  done
  mapfile -t shims < <(instance_shims)
  if (( ${#shims[@]} )); then
    log "killing leftover shims of containerd ($CTRD_INSTANCE): ${shims[*]}"
    kill -KILL "${shims[@]}" 2>/dev/null || true
    local i
    for i in $(seq 1 50); do [[ -z "$(instance_shims)" ]] && break; sleep 0.1; done
  fi
}

other_instance_running() {
  local i
  for i in "${CONTAINERD_INSTANCES[@]}"; do
    [[ "$i" == "$CTRD_INSTANCE" ]] && continue
    is_running "containerd-$i" && return 0
  done
  return 1
}

# remove_cni_chains: deletes the CNI-* iptables chains (portmap, ipMasq) and the rules jumping
# to them. They are shared by all instances, so only when no other instance runs.
remove_cni_chains() {
  if other_instance_running; then return 0; fi
  local table chains c rule
  for table in nat filter mangle; do
    chains=$(iptables -w -t "$table" -S 2>/dev/null | sed -n 's/^-N \(CNI-[^ ]*\)$/\1/p') || continue
    [[ -n "$chains" ]] || continue
    log "removing iptables $table chains: $(tr '\n' ' ' <<<"$chains")"
    # Rules that jump to a CNI chain, anywhere.
    iptables -w -t "$table" -S | grep -E -- '-j CNI-' | grep -v '^-N' | while IFS= read -r rule; do
      eval "iptables -w -t $table ${rule/#-A/-D}" 2>/dev/null || true
    done
    for c in $chains; do iptables -w -t "$table" -F "$c" 2>/dev/null || true; done
    for c in $chains; do iptables -w -t "$table" -X "$c" 2>/dev/null || true; done
  done
}

remove_bridge() {
  local port
  for port in $(ip -o link show master "$CTRD_BRIDGE" 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1); do
    ip link del "$port" 2>/dev/null || true
  done
  if ip link show "$CTRD_BRIDGE" >/dev/null 2>&1; then
    log "removing bridge $CTRD_BRIDGE"
    ip link del "$CTRD_BRIDGE"
  fi
}

stop() {
  local temp=0
  if [[ -x "$CRICTL" ]] && ! socket_answers && [[ -n "$(instance_shims)" ]]; then
    # Pods are left from a containerd that crashed or was killed: start it again briefly and
    # let it tear them down through CRI, which also releases their network (CNI DEL).
    log "containerd ($CTRD_INSTANCE) is down but its shims run: starting it to clean up its pods"
    if [[ -f "$CTRD_DIR/config.toml" ]]; then
      rm -f "$CTRD_SOCK" "$CTRD_SOCK.ttrpc"
      start_containerd
      wait_for "containerd ($CTRD_INSTANCE) socket" 30 socket_answers || true
      temp=1
    fi
  fi
  if [[ -x "$CRICTL" ]] && socket_answers; then
    remove_pods
  fi
  if is_running "$CTRD_PIDNAME"; then
    stop_bg "$CTRD_PIDNAME" 20
  elif (( temp == 0 )); then
    log "containerd ($CTRD_INSTANCE) is not running"
  fi
  rm -f "$STACK_DIR/$CTRD_PIDNAME.pid" "$CTRD_SOCK" "$CTRD_SOCK.ttrpc"
  kill_leftovers
  unmount_under "$CTRD_DIR"
  # All pods are gone: forget their IP reservations and cached CNI results.
  rm -rf "$IPAM_DIR"
  rm -f /var/lib/cni/results/"$CNI_NETWORK"-* 2>/dev/null || true
  remove_bridge
  remove_cni_chains
  rm -f "$LANE_FILE"
  if (( purge )) && [[ -d "$CTRD_DIR" ]]; then
    log "removing $CTRD_DIR"
    rm -rf "$CTRD_DIR"
  fi
  log "containerd ($CTRD_INSTANCE) stopped"
}

kill_daemon() {
  local pid
  if pid=$(pid_of "$CTRD_PIDNAME"); then
    log "killing containerd ($CTRD_INSTANCE) daemon pid $pid with SIGKILL (shims and pods keep running)"
    kill -KILL "$pid"
    local i
    for i in $(seq 1 50); do
      if [[ ! -e "/proc/$pid" ]] || ! is_running "$CTRD_PIDNAME"; then break; fi
      sleep 0.1
    done
    rm -f "$STACK_DIR/$CTRD_PIDNAME.pid"
  else
    log "containerd ($CTRD_INSTANCE) is not running"
  fi
}

case "$cmd" in
  install)
    containerd_lane "$VKCRI_CONTAINERD"
    install_packages
    [[ "$CTRD_LANE" == 1.6 ]] || "$HACK_DIR/build-containerd.sh"
    build_crictl
    ;;
  config)
    containerd_lane "$VKCRI_CONTAINERD"
    write_config
    echo "$CTRD_DIR/config.toml"
    ;;
  start) start ;;
  stop) stop ;;
  kill) kill_daemon ;;
  status)
    if socket_answers; then
      log "containerd ($CTRD_INSTANCE, lane $CTRD_LANE) is up: pid $(pid_of "$CTRD_PIDNAME" || echo '?'), socket $CTRD_SOCK"
      exit 0
    fi
    log "containerd ($CTRD_INSTANCE) is down"
    exit 1
    ;;
  *) usage ;;
esac
