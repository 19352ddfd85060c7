#!/usr/bin/env bash
# Runs a private containerd (lane 2) whose root, and so its image file system, is a small
# loop-mounted ext4 file system: what the image garbage collection e2e test fills up without
# touching the stack's shared containerd.
#
#   hack/imagefs-containerd.sh start   make the file system (IMAGEFS_SIZE, default 96M), mount
#                                      it, write the config, start containerd; prints its endpoint
#   hack/imagefs-containerd.sh stop    remove its pods through CRI, stop it and its shims,
#                                      unmount and remove everything it made
#
# Everything lives under $IMAGEFS_RUN (/var/run/vk-cri-gc) and $IMAGEFS_LIB (/var/lib/vk-cri-gc),
# with its own bridge (vkgc0, 10.97.0.0/24), socket, state, runc root and CNI dirs. Images come
# from the stack's local registry, through the "vk" instance's registry host configuration.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

RUN_DIR=${IMAGEFS_RUN:-/var/run/vk-cri-gc}/containerd
LIB_DIR=${IMAGEFS_LIB:-/var/lib/vk-cri-gc}
IMG="$LIB_DIR/imagefs.img"
ROOT="$LIB_DIR/root"
SOCK="$RUN_DIR/containerd.sock"
BRIDGE=vkgc0
PIDFILE="$RUN_DIR/containerd.pid"
containerd_lane 2

crictl_() { "$CRICTL" --runtime-endpoint "unix://$SOCK" "$@"; }
CRICTL=${CRICTL:-$(sed -n 's/^CRICTL=//p' "$STACK_DIR/env")}

start() {
  mkdir -p "$RUN_DIR/state" "$RUN_DIR/cni/net.d" "$RUN_DIR/cni/ipam" "$LIB_DIR" "$ROOT"
  if ! mountpoint -q "$ROOT"; then
    truncate -s "${IMAGEFS_SIZE:-96M}" "$IMG"
    mkfs.ext4 -q -F "$IMG"
    mount -o loop "$IMG" "$ROOT"
  fi
  if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
    ip link add "$BRIDGE" type bridge
    ip addr add 10.97.0.1/24 dev "$BRIDGE"
    ip link set "$BRIDGE" up
  fi
  cat >"$RUN_DIR/cni/net.d/10-vkgc.conflist" <<CNI
{
  "cniVersion": "1.0.0",
  "name": "vk-cri-gc",
  "plugins": [
    {"type": "bridge", "bridge": "$BRIDGE", "isGateway": false, "ipMasq": false,
     "ipam": {"type": "host-local", "dataDir": "$RUN_DIR/cni/ipam",
              "ranges": [[{"subnet": "10.97.0.0/24", "gateway": "10.97.0.1"}]]}}
  ]
}
CNI
  cat >"$RUN_DIR/config.toml" <<TOML
version = 3
root = "$ROOT/containerd"
state = "$RUN_DIR/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.blockfile", "io.containerd.snapshotter.v1.erofs", "io.containerd.internal.v1.tracing", "io.containerd.tracing.processor.v1.otlp"]
[grpc]
  address = "$SOCK"
[ttrpc]
  address = "$SOCK.ttrpc"
[plugins.'io.containerd.internal.v1.opt']
  path = "$RUN_DIR/opt"
[plugins.'io.containerd.cri.v1.images']
  snapshotter = "overlayfs"
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = "$PAUSE_IMAGE"
  [plugins.'io.containerd.cri.v1.images'.registry]
    config_path = "$RUNTIME_STACK_DIR/containerd-vk/certs.d"
[plugins.'io.containerd.cri.v1.runtime']
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  [plugins.'io.containerd.cri.v1.runtime'.containerd]
    default_runtime_name = "runc"
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
        BinaryName = "$CTRD_RUNC"
        SystemdCgroup = false
        Root = "$RUN_DIR/state/runc"
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = ["/usr/lib/cni"]
    conf_dir = "$RUN_DIR/cni/net.d"
    max_conf_num = 1
[plugins.'io.containerd.grpc.v1.cri']
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
TOML
  if [[ -f "$PIDFILE" ]] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
    echo "unix://$SOCK"; return
  fi
  PATH="$CTRD_PATH" setsid "$CTRD_CONTAINERD" --config "$RUN_DIR/config.toml" >>"$RUN_DIR/containerd.log" 2>&1 </dev/null &
  echo $! >"$PIDFILE"
  wait_for "containerd (imagefs) to answer" 30 crictl_ version >/dev/null
  echo "unix://$SOCK"
}

stop() {
  if [[ -S "$SOCK" ]] && crictl_ version >/dev/null 2>&1; then
    for sb in $(crictl_ pods -q 2>/dev/null); do
      crictl_ stopp "$sb" >/dev/null 2>&1 || true
      crictl_ rmp "$sb" >/dev/null 2>&1 || true
    done
  fi
  if [[ -f "$PIDFILE" ]]; then
    local pid; pid=$(cat "$PIDFILE")
    kill "$pid" 2>/dev/null || true
    wait_for "containerd (imagefs) to exit" 30 bash -c "! kill -0 $pid 2>/dev/null" || kill -9 "$pid" 2>/dev/null || true
    rm -f "$PIDFILE"
  fi
  # Shims of this instance (their command line names its socket's directory).
  for pid in $(pgrep -f "containerd-shim-runc-v2 .*-address $SOCK" 2>/dev/null || true); do
    kill -9 "$pid" 2>/dev/null || true
  done
  grep " $RUN_DIR\| $ROOT" /proc/self/mounts | awk '{print $2}' | sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
  if mountpoint -q "$ROOT"; then umount "$ROOT" || umount -l "$ROOT"; fi
  ip link del "$BRIDGE" 2>/dev/null || true
  rm -rf "$RUN_DIR" "$LIB_DIR"
  rmdir --ignore-fail-on-non-empty "$(dirname "$RUN_DIR")" 2>/dev/null || true
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
