#!/bin/sh
# Entrypoint of the runtime bundle (runtime.mode: bundled): the node's own containerd and vk-cri,
# in one container so that both live in one mount namespace. vk-cri's tmpfs volumes and subPath
# binds are then visible to containerd as they are made, without Bidirectional propagation.
#
# Written into a ConfigMap by the chart; everything node-specific comes from the environment:
#   RUN_DIR       sockets and state: containerd.sock, s/ (shim sockets), state/, net.d/, certs.d/
#   RUNTIME_DIR   containerd's root (images, snapshots, metadata) and the IPAM data
#   ROOT_DIR, POD_LOG_DIR   vk-cri's (--root-dir, --pod-log-dir)
#   CGROUP_ROOT   vk-cri's --cgroup-root; SHIM_CGROUP: where the shims live (below)
#   BRIDGE, SUBNET or NODE_SUBNETS ("host=cidr ..." looked up with HOST_NODE_NAME)
#   SANDBOX_IMAGE, INSECURE_REGISTRIES, RESTRICT_OOM_SCORE_ADJ, SNAPSHOTTER
# vk-cri's own flags are this script's arguments.
#
# Restarts (helm upgrade, a crash, a deleted pod): the pod runs with hostPID and the shims are
# placed in SHIM_CGROUP, outside this container's cgroup, so that neither the end of this
# container's PID namespace nor the runtime's kill of its remaining processes reaches them: the
# pods' containers keep running, and the next containerd (same root, state and shim socket
# directory, all host paths) reconnects to their shims.
# Network namespaces: containerd pins each sandbox's under /var/run/netns, the host directory
# <RUN_DIR>-netns (not below RUN_DIR: one mount only) that the init container made a shared mount
# on the host and that this container mounts with Bidirectional propagation: the pins outlive this container, and the next containerd, which
# needs them to stop a sandbox or forward a port, sees them.
# Stop with no sandbox left (after `helm uninstall`, whose pre-delete hook `vk-cri drain-nodes`
# deleted every pod of the release's nodes, which vk-cri stopped and removed as the kubelet does):
# the runtime stops and what it and vk-cri made outside the host's files goes: mounts under the
# root dir (in this mount namespace), the cgroups, the bridge. The host directories stay.
set -eu

log() { echo "runtime.sh: $*" >&2; }

SOCK="$RUN_DIR/containerd.sock"
CONFIG="$RUN_DIR/config.toml"
CNI_CONF_DIR="$RUN_DIR/net.d"
CERTS_DIR="$RUN_DIR/certs.d"

# The node's pod subnet: NODE_SUBNETS names one for this host, else SUBNET.
pick_subnet() {
  for pair in ${NODE_SUBNETS:-}; do
    if [ "${pair%%=*}" = "${HOST_NODE_NAME:-}" ]; then SUBNET=${pair#*=}; return; fi
  done
}
pick_subnet
net=${SUBNET%/*}
prefix=${SUBNET#*/}
GATEWAY=${net%.*}.$((${net##*.} + 1))

# cgroup hierarchies: v1 mounts, and a v2 mount when it is the only one (unified).
cgroup_mounts() { awk '$9 == "cgroup" || $9 == "cgroup2" {print $5}' /proc/self/mountinfo; }

make_cgroup() {
  for mp in $(cgroup_mounts); do
    d=$mp$1
    mkdir -p "$d"
    # A new v1 cpuset cgroup has no CPUs or memory nodes: give it its parent's.
    for f in cpuset.cpus cpuset.mems; do
      if [ -f "$d/$f" ] && [ -z "$(cat "$d/$f")" ]; then cat "$(dirname "$d")/$f" >"$d/$f"; fi
    done
  done
}

remove_cgroup() {
  for mp in $(cgroup_mounts); do
    [ -d "$mp$1" ] && find "$mp$1" -depth -type d -exec rmdir {} \; 2>/dev/null || true
    [ -d "$mp$1" ] && log "cgroup $mp$1 left (processes in it?)"
  done
  return 0
}

write_config() {
  mkdir -p "$RUN_DIR/s" "$RUN_DIR/tmp" "$RUN_DIR/state" "$CNI_CONF_DIR" "$CERTS_DIR" "$RUNTIME_DIR/root" "$RUNTIME_DIR/ipam"
  cat >"$CONFIG" <<TOML
# Written by runtime.sh (charts/vk-cri) for node $VKCRI_NODE.
version = 3
root = "$RUNTIME_DIR/root"
state = "$RUN_DIR/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.blockfile", "io.containerd.snapshotter.v1.erofs", "io.containerd.internal.v1.tracing", "io.containerd.tracing.processor.v1.otlp"]

[grpc]
  address = "$SOCK"

[ttrpc]
  address = "$SOCK.ttrpc"

[plugins.'io.containerd.internal.v1.opt']
  path = "$RUNTIME_DIR/opt"

# Shim sockets on a host path: the next containerd (after a restart of this container) finds them.
[plugins.'io.containerd.shim.v1.manager']
  socket_dir = "$RUN_DIR/s"

[plugins.'io.containerd.cri.v1.images']
  snapshotter = "$SNAPSHOTTER"
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = "$SANDBOX_IMAGE"
  [plugins.'io.containerd.cri.v1.images'.registry]
    config_path = "$CERTS_DIR"

[plugins.'io.containerd.cri.v1.runtime']
  restrict_oom_score_adj = $RESTRICT_OOM_SCORE_ADJ
  # Pins in /var/run/netns: <runDir>-netns on the host, shared (see below).
  netns_mounts_under_state_dir = false
  [plugins.'io.containerd.cri.v1.runtime'.containerd]
    default_runtime_name = "runc"
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
        BinaryName = "/usr/local/sbin/runc"
        SystemdCgroup = false
        Root = "$RUN_DIR/state/runc"
        # Out of this container's cgroup: the shims outlive a restart of vk-cri's pod.
        ShimCgroup = "$SHIM_CGROUP"
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = ["/opt/cni/bin"]
    conf_dir = "$CNI_CONF_DIR"
    max_conf_num = 1

[plugins.'io.containerd.grpc.v1.cri']
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  stream_idle_timeout = "4h0m0s"
TOML
  for reg in ${INSECURE_REGISTRIES:-}; do
    mkdir -p "$CERTS_DIR/$reg"
    printf 'server = "http://%s"\n\n[host."http://%s"]\n  capabilities = ["pull", "resolve"]\n' "$reg" "$reg" >"$CERTS_DIR/$reg/hosts.toml"
  done
  # bridge + host-local: the host reaches the pods over the bridge, which holds the gateway
  # address (made below; isGateway would switch the host's ip_forward on).
  cat >"$CNI_CONF_DIR/10-vk-cri.conflist" <<JSON
{
  "cniVersion": "1.0.0",
  "name": "vk-cri-$BRIDGE",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$BRIDGE",
      "isGateway": false,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$RUNTIME_DIR/ipam",
        "ranges": [[{"subnet": "$SUBNET", "gateway": "$GATEWAY"}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    }
  ]
}
JSON
}

ensure_bridge() {
  ip link show "$BRIDGE" >/dev/null 2>&1 || ip link add name "$BRIDGE" type bridge
  ip -4 -o addr show dev "$BRIDGE" | grep -q "inet $GATEWAY/$prefix" || ip addr add "$GATEWAY/$prefix" dev "$BRIDGE"
  ip link set "$BRIDGE" up
}

cri() { crictl --runtime-endpoint "unix://$SOCK" --image-endpoint "unix://$SOCK" --timeout 60s "$@"; }

# unmount_under DIR: every mount at or below DIR in this mount namespace, deepest first.
unmount_under() {
  awk -v d="$1" '$5 == d || index($5, d "/") == 1 {print $5}' /proc/self/mountinfo | sort -r |
    while read -r m; do umount "$m" 2>/dev/null || umount -l "$m" || log "cannot unmount $m"; done
}

# settle_removals: a sandbox that no longer runs while none does is one vk-cri is removing (a
# deleted pod leaves the API before the runtime, as on the kubelet, so an uninstall's drain can end
# a moment before the removal): give vk-cri up to 15 s to finish, so that nothing is left. With a
# running sandbox (an upgrade while pods run) it returns at once.
settle_removals() {
  i=0
  while [ $i -lt 15 ]; do
    all=$(cri pods -q 2>/dev/null) || return 0
    [ -n "$all" ] || return 0
    ready=$(cri pods -q --state ready 2>/dev/null) || return 0
    [ -z "$ready" ] || return 0
    sleep 1
    i=$((i + 1))
  done
}

# reap_shims: once no sandbox is left, a process still in SHIM_CGROUP is a shim that had not yet
# exited when containerd stopped: end it (TERM, then KILL after 5 s).
reap_shims() {
  for sig in TERM KILL; do
    left=""
    for mp in $(cgroup_mounts); do
      f="$mp$SHIM_CGROUP/cgroup.procs"
      [ -f "$f" ] && left="$left $(cat "$f")"
    done
    [ -n "$(echo $left)" ] || return 0
    log "ending leftover shim processes:$left (SIG$sig)"
    for pid in $left; do kill "-$sig" "$pid" 2>/dev/null || true; done
    i=0
    while [ $i -lt 5 ]; do
      alive=""
      for pid in $left; do kill -0 "$pid" 2>/dev/null && alive="$alive $pid"; done
      [ -n "$alive" ] || return 0
      sleep 1
      i=$((i + 1))
    done
  done
}

cleanup() {
  log "no sandbox left: removing node $VKCRI_NODE's mounts, cgroups and bridge"
  stop_containerd
  reap_shims
  unmount_under "$ROOT_DIR"
  remove_cgroup "$CGROUP_ROOT"
  remove_cgroup "$SHIM_CGROUP"
  ip link del "$BRIDGE" 2>/dev/null || true
  # The shared bind mount the init container made on the host for the network namespaces.
  # (In the mount namespace of this container's parent, its runtime's shim.)
  nsenter -t "$PPID" -m -- umount "$RUN_DIR-netns" 2>/dev/null || true
}

ctrd=""
stop_containerd() {
  [ -n "$ctrd" ] || return 0
  kill -TERM "$ctrd" 2>/dev/null || true
  i=0
  while kill -0 "$ctrd" 2>/dev/null && [ $i -lt 30 ]; do sleep 1; i=$((i + 1)); done
  kill -KILL "$ctrd" 2>/dev/null || true
  ctrd=""
}

write_config
make_cgroup "$SHIM_CGROUP"
ensure_bridge
rm -f "$SOCK" "$SOCK.ttrpc"
# containerd's ShimCgroup moves the shims in the v1 hierarchies only: on a hybrid host (v1 plus
# a unified v2 mount, as this container's own cgroup there is what its runtime and its kubelet
# kill when the container ends) containerd starts in SHIM_CGROUP's unified cgroup, so that the
# shims it spawns are born there. It stays in this container's v1 cgroups (memory accounting),
# and this script stops it itself.
hybrid_v2=""
if awk '$9 == "cgroup" {found=1} END {exit !found}' /proc/self/mountinfo; then
  hybrid_v2=$(awk '$9 == "cgroup2" {print $5}' /proc/self/mountinfo)
fi
(
  # "0": the writing process, this subshell, which then becomes containerd.
  for mp in $hybrid_v2; do echo 0 >"$mp$SHIM_CGROUP/cgroup.procs"; done
  # Shims write runc's process files to TMPDIR: a host path, since this container's own /tmp
  # goes with it while its shims keep running.
  exec env TMPDIR="$RUN_DIR/tmp" containerd --config "$CONFIG"
) &
ctrd=$!
i=0
until cri version >/dev/null 2>&1; do
  kill -0 "$ctrd" 2>/dev/null || { log "containerd exited"; exit 1; }
  i=$((i + 1))
  [ $i -lt 120 ] || { log "containerd did not answer on $SOCK"; exit 1; }
  sleep 0.5
done
log "containerd answers on $SOCK (subnet $SUBNET on $BRIDGE)"

vk-cri "$@" &
vk=$!
term=0
trap 'term=1' TERM INT
# Supervise both: the container ends (and is restarted) when either stops.
while kill -0 "$vk" 2>/dev/null; do
  if [ "$term" = 1 ]; then
    settle_removals
    kill -TERM "$vk" 2>/dev/null || true
    break
  fi
  if ! kill -0 "$ctrd" 2>/dev/null; then
    log "containerd exited: stopping vk-cri"
    kill -TERM "$vk" 2>/dev/null || true
    break
  fi
  sleep 1 || true
done
rc=0
wait "$vk" || rc=$?
log "vk-cri exited ($rc)"
if [ "$term" = 1 ] && sandboxes=$(cri pods -q) && [ -z "$sandboxes" ]; then
  cleanup
else
  stop_containerd
fi
exit "$rc"
