#!/usr/bin/env bash
# The VM lane's guest (image from build-image.sh):
#   hack/vm/vm.sh start      boot it (qemu TCG, 2 vCPUs) on a copy-on-write overlay of the cached
#                            image, with the seed disk made from $VM_STATE/seed; wait for sshd and
#                            containerd; forward the guest's containerd socket to
#                            $VM_STATE/containerd.sock (ssh)
#   hack/vm/vm.sh stop       power it off (systemd shutdown, then qemu is stopped if it lingers)
#   hack/vm/vm.sh status     exit 0 iff running
#   hack/vm/vm.sh ssh CMD..  run a command in the guest as root
#
# The guest reaches the host's loopback (API server, registry) at 10.0.2.2; hostfwd brings its
# sshd to 127.0.0.1:$VM_SSH_PORT and its kubelet API to 127.0.0.1:$VM_KUBELET_PORT.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

pidfile="$VM_STATE/qemu.pid"
fwd_pidfile="$VM_STATE/cri-forward.pid"
running() { [[ -f "$pidfile" ]] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

start_forward() {
  stop_forward
  rm -f "$VM_STATE/containerd.sock"
  setsid ssh -q -N -i "$VM_STATE/id_ed25519" -p "$VM_SSH_PORT" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
    -o BatchMode=yes -o ExitOnForwardFailure=yes -o ServerAliveInterval=10 -o StreamLocalBindUnlink=yes \
    -L "$VM_STATE/containerd.sock:/run/containerd/containerd.sock" root@127.0.0.1 </dev/null >>"$VM_STATE/cri-forward.log" 2>&1 &
  echo $! >"$fwd_pidfile"
  wait_for "the guest's containerd socket on $VM_STATE/containerd.sock" 30 test -S "$VM_STATE/containerd.sock"
}

stop_forward() {
  if [[ -f "$fwd_pidfile" ]]; then
    kill "$(cat "$fwd_pidfile")" 2>/dev/null || true
    rm -f "$fwd_pidfile"
  fi
}

case "${1:-}" in
  start)
    if running; then log "VM already running (pid $(cat "$pidfile"))"; exit 0; fi
    img=$("$HACK_DIR/vm/build-image.sh")
    [[ -d "$VM_STATE/seed" ]] || die "no seed in $VM_STATE/seed (hack/vm/node.sh seed)"
    mkdir -p "$VM_STATE"
    install -m 0600 "$img/id_ed25519" "$VM_STATE/id_ed25519"
    rm -f "$VM_STATE/overlay.qcow2" "$VM_STATE/seed.ext4" "$VM_STATE/console.log"
    qemu-img create -q -f qcow2 -b "$img/rootfs.ext4" -F raw "$VM_STATE/overlay.qcow2"
    mkfs.ext4 -q -F -d "$VM_STATE/seed" "$VM_STATE/seed.ext4" 256M >&2
    t0=$SECONDS
    log "booting the VM (qemu TCG, $VM_CPUS vCPUs, $VM_MEM MiB; console $VM_STATE/console.log)"
    qemu-system-x86_64 -name vk-vm -accel tcg,thread=multi -cpu max -smp "$VM_CPUS" -m "$VM_MEM" \
      -kernel "$img/vmlinuz" -initrd "$img/initrd.img" \
      -append "console=ttyS0 root=/dev/vda rw net.ifnames=0 mitigations=off quiet loglevel=3 systemd.show_status=error" \
      -drive "file=$VM_STATE/overlay.qcow2,if=virtio,format=qcow2,cache=unsafe" \
      -drive "file=$VM_STATE/seed.ext4,if=virtio,format=raw,readonly=on" \
      -netdev "user,id=n0,hostfwd=tcp:127.0.0.1:$VM_SSH_PORT-:22,hostfwd=tcp:127.0.0.1:$VM_KUBELET_PORT-:$VM_KUBELET_PORT" \
      -device virtio-net-pci,netdev=n0 \
      -display none -serial "file:$VM_STATE/console.log" -monitor none \
      -daemonize -pidfile "$pidfile"
    wait_for "the guest's sshd" "${VM_BOOT_TIMEOUT:-600}" vm_ssh true ||
      { tail -30 "$VM_STATE/console.log" >&2; exit 1; }
    log "guest sshd up $((SECONDS - t0))s after qemu started"
    wait_for "containerd in the guest" 120 vm_ssh 'systemctl is-active -q containerd && test -S /run/containerd/containerd.sock' ||
      { vm_ssh 'systemctl status --no-pager containerd vk-seed; journalctl -b --no-pager -u containerd -u vk-seed | tail -30' >&2 || true; exit 1; }
    echo $((SECONDS - t0)) >"$VM_STATE/boot-seconds"
    log "VM booted in $((SECONDS - t0))s: $(vm_ssh 'uname -r; systemctl --version | head -1; stat -fc %T /sys/fs/cgroup; /usr/local/bin/containerd --version' | tr '\n' ' ')"
    start_forward
    ;;
  stop)
    stop_forward
    running || { rm -f "$pidfile"; exit 0; }
    pid=$(cat "$pidfile")
    vm_ssh 'systemctl poweroff' >/dev/null 2>&1 || true
    wait_for "the VM to power off" 90 bash -c "! kill -0 $pid 2>/dev/null" || { kill "$pid" 2>/dev/null || true; sleep 1; kill -9 "$pid" 2>/dev/null || true; }
    rm -f "$pidfile" "$VM_STATE/overlay.qcow2"
    log "VM stopped"
    ;;
  status) running ;;
  ssh) shift; vm_ssh "$@" ;;
  *) die "usage: $0 start|stop|status|ssh CMD..." ;;
esac
