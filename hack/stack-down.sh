#!/usr/bin/env bash
# Takes the whole local stack down: every process a hack/ script started (by the PID files in
# $STACK_DIR), the control plane, the registry, the containerd instances (their pods, shims,
# mounts, bridges, CNI iptables chains). Caches ($CACHE_DIR) and data dirs are kept;
#   hack/stack-down.sh --purge   also removes $STACK_DIR (etcd data, images, PKI, logs).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

purge=
case "${1:-}" in
  "") ;;
  --purge) purge=--purge ;;
  *) echo "usage: $0 [--purge]" >&2; exit 2 ;;
esac

t0=$SECONDS
log "taking the local stack in $STACK_DIR down${purge:+ (purge)}"

# 1. Agents and anything else started with a PID file (vk-cri, a reference kubelet, ...) first,
#    so that nothing recreates pods while the runtimes are cleaned up.
known=" etcd kube-apiserver kube-controller-manager kube-scheduler registry containerd-vk containerd-ref "
if [[ -d "$STACK_DIR" ]]; then
  for f in "$STACK_DIR"/*.pid; do
    [[ -e "$f" ]] || continue
    name=$(basename "$f" .pid)
    [[ "$known" == *" $name "* ]] && continue
    stop_bg "$name" 20
  done
fi

# The env file describes a running stack: it goes first, so nobody picks up a stack going down.
rm -f "$STACK_DIR/env"

# 2. The control plane.
"$HACK_DIR/control-plane.sh" stop $purge

# 3. The registry.
if [[ -x "$HACK_DIR/registry.sh" ]]; then
  "$HACK_DIR/registry.sh" stop || log "hack/registry.sh stop failed"
fi
stop_bg registry 10

# 4. The containerd instances, whether they run or not (leftover shims, mounts, bridges), and the
#    CRI-O ones of a stack on CRI-O (VKCRI_RUNTIME=crio) or of a smoke run on it.
for inst in "${CONTAINERD_INSTANCES[@]}"; do
  "$HACK_DIR/containerd.sh" stop "$inst" $purge
done
for inst in vk ref; do
  crio_instance "$inst"
  if [[ -d "$CRIO_DIR" ]]; then "$HACK_DIR/crio.sh" stop "$inst" $purge; fi
done

# 5. Whatever is still mounted under the stack dir.
unmount_under "$STACK_DIR"

# 6. PID 1 of this VM reaps orphans only every second or two: wait (briefly) until the daemons
#    that exited are gone from the process table, so that pgrep shows nothing of ours.
no_zombies() { ! ps -eo stat=,comm= | awk '$1 ~ /^Z/ && $2 ~ /^(containerd|etcd|kube-|registry)/' | grep -q .; }
if ! no_zombies; then
  log "waiting for exited processes to be reaped"
  wait_for "exited processes to be reaped" 10 no_zombies || true
fi

if [[ -n "$purge" && -d "$STACK_DIR" ]]; then
  log "removing $STACK_DIR"
  rm -rf "$STACK_DIR"
fi
log "local stack down in $((SECONDS - t0))s"
