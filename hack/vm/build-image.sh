#!/usr/bin/env bash
# Builds the VM lane's guest image, cached under $CACHE_DIR/vm by the hash of its inputs (this
# script, lib.sh, hack/vm/guest, the containerd and runc binaries):
#
#   rootfs.ext4   Debian 12 made with debootstrap from Debian's packages ($VM_PACKAGES), with
#                 Debian's cloud kernel unpacked into it (apt-get download + dpkg-deb -x, not
#                 installed), the stack's containerd 2.x and runc, and hack/vm/guest's files
#                 (systemd units, network); turned into an ext4 image with mkfs.ext4 -d.
#   vmlinuz, initrd.img   the cloud kernel and an initramfs made in the root file system by
#                 Debian's initramfs-tools (the cloud kernel has virtio_blk as a module).
#   id_ed25519    the key root logs in with over ssh (the guest listens only behind qemu's
#                 user networking, forwarded to 127.0.0.1).
#
# The debootstrap result is cached on its own (base-<hash of the package list>.tar), so that a
# change of the guest's files rebuilds in seconds. Prints the image directory.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

img=$(vm_image_dir)
if [[ -f "$img/rootfs.ext4" && -f "$img/vmlinuz" && -f "$img/initrd.img" ]]; then
  log "VM image cached: $img" >&2
  echo "$img"
  exit 0
fi

need() { command -v "$1" >/dev/null 2>&1; }
if ! need debootstrap || ! need qemu-system-x86_64 || ! need mkfs.ext4; then
  log "installing debootstrap and qemu" >&2
  apt-get install -y --no-install-recommends debootstrap qemu-system-x86 qemu-utils e2fsprogs >&2 ||
    { apt-get update >&2 && apt-get install -y --no-install-recommends debootstrap qemu-system-x86 qemu-utils e2fsprogs >&2; }
fi
[[ -x "$CONTAINERD2_BIN_DIR/containerd" && -x "$RUNC_BIN_DIR/runc" ]] || "$HACK_DIR/build-containerd.sh" >&2

mkdir -p "$VM_CACHE" "$VM_WORK"
start=$SECONDS
base="$VM_CACHE/base-$DEBIAN_SUITE-$(echo "$VM_PACKAGES $DEBIAN_MIRROR" | sha256sum | cut -c1-12).tar"
build="$VM_WORK/build"
rm -rf "$build"
mkdir -p "$build/rootfs"
root="$build/rootfs"
if [[ ! -f "$base" ]]; then
  log "debootstrap $DEBIAN_SUITE ($VM_PACKAGES)" >&2
  debootstrap --variant=minbase --include="$VM_PACKAGES" "$DEBIAN_SUITE" "$root" "$DEBIAN_MIRROR" >"$build/debootstrap.log" 2>&1 ||
    { tail -20 "$build/debootstrap.log" >&2; die "debootstrap failed (log $build/debootstrap.log)"; }
  # The package cache is not needed in the image.
  rm -rf "$root"/var/cache/apt/archives/*.deb
  tar -C "$root" --numeric-owner -cf "$base.tmp" . && mv "$base.tmp" "$base"
  log "debootstrap done in $((SECONDS - start))s" >&2
else
  tar -C "$root" --numeric-owner -xf "$base"
fi

# The cloud kernel: the package's files only (no maintainer scripts), then an initramfs from the
# root file system's initramfs-tools with the virtio drivers.
log "kernel $VM_KERNEL_PKG" >&2
kver_pkg=$(apt-cache depends "$VM_KERNEL_PKG" | sed -n 's/.*Depends: \(linux-image-[^ ]*\)$/\1/p' | head -1)
[[ -n "$kver_pkg" ]] || die "cannot resolve $VM_KERNEL_PKG to a kernel package (apt-get update?)"
(cd "$build" && apt-get download "$kver_pkg" >/dev/null 2>&1) || die "apt-get download $kver_pkg failed"
# Unpacked beside the root and copied in: the package's /lib must land in the merged /usr/lib (tar
# would replace the /lib symlink by a directory).
dpkg-deb -x "$build"/"$kver_pkg"_*.deb "$build/kernel"
cp -a "$build/kernel/boot/." "$root/boot/"
cp -a "$build/kernel/lib/." "$root/usr/lib/"
[[ ! -d "$build/kernel/usr" ]] || cp -a "$build/kernel/usr/." "$root/usr/"
kver=${kver_pkg#linux-image-}
printf '%s\n' virtio_pci virtio_blk virtio_net virtio_console >>"$root/etc/initramfs-tools/modules"
mount -t proc proc "$root/proc"
trap 'umount "$root/proc" 2>/dev/null || true' EXIT
chroot "$root" /usr/bin/env PATH=/usr/sbin:/usr/bin:/sbin:/bin depmod -a "$kver"
chroot "$root" /usr/bin/env PATH=/usr/sbin:/usr/bin:/sbin:/bin update-initramfs -c -k "$kver" >"$build/initramfs.log" 2>&1 || { tail -20 "$build/initramfs.log" >&2; die "update-initramfs failed"; }
umount "$root/proc"; trap - EXIT

# The stack's runtime, in /usr/local (before Debian's runc on PATH).
install -m 0755 "$CONTAINERD2_BIN_DIR"/containerd "$CONTAINERD2_BIN_DIR"/containerd-shim-runc-v2 "$CONTAINERD2_BIN_DIR"/ctr "$root/usr/local/bin/"
install -m 0755 "$RUNC_BIN_DIR/runc" "$root/usr/local/sbin/runc"

# The guest's own files (units, network), then what is machine-specific.
cp -a "$HACK_DIR/vm/guest/." "$root/"
echo "vk-vm" >"$root/etc/hostname"
printf '127.0.0.1 localhost\n127.0.1.1 vk-vm\n%s kubernetes\n' "$VM_HOST_IP" >"$root/etc/hosts"
# No fstab entry for the root: the initramfs mounted it read-write, and an entry would make
# systemd wait for udev's dev-vda.device (minutes under emulation on a loaded host).
: >"$root/etc/fstab"
echo "nameserver 10.0.2.3" >"$root/etc/resolv.conf"
ssh-keygen -q -t ed25519 -N '' -f "$build/id_ed25519"
install -d -m 0700 "$root/root/.ssh"
install -m 0600 "$build/id_ed25519.pub" "$root/root/.ssh/authorized_keys"
# A fixed machine-id keeps journald quiet; no first-boot wizard.
echo "0123456789abcdef0123456789abcdef" >"$root/etc/machine-id"
wants="$root/etc/systemd/system/multi-user.target.wants"
mkdir -p "$wants"
for unit in systemd-networkd.service vk-seed.service containerd.service; do
  ln -sf "/etc/systemd/system/$unit" "$wants/$unit"
  [[ -f "$root/etc/systemd/system/$unit" ]] || ln -sf "/lib/systemd/system/$unit" "$wants/$unit"
done
# Nothing on the console but the kernel and systemd; no timers that write to the disk.
for unit in apt-daily.timer apt-daily-upgrade.timer dpkg-db-backup.timer e2scrub_all.timer fstrim.timer \
  serial-getty@ttyS0.service getty@tty1.service systemd-networkd-wait-online.service; do
  ln -sf /dev/null "$root/etc/systemd/system/$unit"
done

mkdir -p "$img.tmp"
cp "$root/boot/vmlinuz-$kver" "$img.tmp/vmlinuz"
cp "$root/boot/initrd.img-$kver" "$img.tmp/initrd.img"
cp "$build/id_ed25519" "$img.tmp/id_ed25519"
echo "$kver" >"$img.tmp/kernel-version"
# Room for images and pods: 4 GiB, sparse.
mkfs.ext4 -q -F -L vk-vm -d "$root" "$img.tmp/rootfs.ext4" 4G >&2
rm -rf "$img" && mv "$img.tmp" "$img"
rm -rf "$build"
# Older builds go (a few hundred MB each); the debootstrap tarballs stay.
for old in "$VM_CACHE"/debian12-*; do
  [[ "$old" == "$img" ]] || rm -rf "$old"
done
log "VM image built in $((SECONDS - start))s: $img" >&2
echo "$img"
