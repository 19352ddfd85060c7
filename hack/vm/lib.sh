# Shared settings of the VM lane (sourced by the scripts in hack/vm). The VM is a Debian 12 guest
# under qemu's software emulation with systemd as PID 1 on cgroup v2; it runs containerd 2.x with
# the systemd cgroup driver and a vk-cri node, against the control plane on the host.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

VM_NAME=${VKCRI_VM_NAME:-vmlane}
# Built images: one directory per build input hash (build-image.sh).
VM_CACHE=${VKCRI_VM_CACHE:-$CACHE_DIR/vm}
# The running VM's state: pid, console log, overlay disk, seed disk, ssh key copy.
VM_STATE=${VKCRI_VM_STATE:-/var/run/vk-cri-$VM_NAME}
VM_WORK=${VKCRI_VM_WORK:-/var/lib/vk-cri-$VM_NAME}
# Host ports (the vmlane range 10360-10369): the guest's kubelet API, its sshd.
VM_KUBELET_PORT=${VKCRI_VM_KUBELET_PORT:-10360}
VM_SSH_PORT=${VKCRI_VM_SSH_PORT:-10361}
VM_MEM=${VKCRI_VM_MEM:-3072}
VM_CPUS=${VKCRI_VM_CPUS:-2}
# qemu's user networking: the host's loopback as the guest sees it.
VM_HOST_IP=10.0.2.2

DEBIAN_SUITE=bookworm
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
# The guest's packages, all from Debian: systemd as init, dbus for the systemd cgroup driver,
# what pods need (iptables, CNI plugins, runc as a fallback; the stack's runc 1.5.3 is used),
# sshd to drive the guest, an initramfs for the cloud kernel's modular virtio drivers.
VM_PACKAGES=systemd,systemd-sysv,dbus,udev,kmod,iproute2,procps,iptables,containernetworking-plugins,runc,ca-certificates,busybox-static,initramfs-tools,openssh-server,util-linux
VM_KERNEL_PKG=linux-image-cloud-amd64

# vm_image_dir: the directory of the image built from the current inputs.
vm_image_dir() {
  local key
  key=$( { cat "$HACK_DIR/vm/build-image.sh" "$HACK_DIR/vm/lib.sh"; find "$HACK_DIR/vm/guest" -type f | sort | xargs cat;
           sha256sum "$CONTAINERD2_BIN_DIR/containerd" "$RUNC_BIN_DIR/runc" | cut -d' ' -f1; } | sha256sum | cut -c1-16)
  echo "$VM_CACHE/debian12-$key"
}

vm_ssh() {
  ssh -q -i "$VM_STATE/id_ed25519" -p "$VM_SSH_PORT" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
    -o ConnectTimeout=5 -o BatchMode=yes root@127.0.0.1 "$@"
}
