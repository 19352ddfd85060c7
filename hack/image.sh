#!/usr/bin/env bash
# Builds vk-cri's OCI images without Docker (hack/tools/image) and pushes them to the local
# registry. Prints the image digest on stdout.
#   hack/image.sh                 the minimal image: the static bin/vk-cri on a minimal base,
#                                 $VKCRI_IMAGE_REPO:$VKCRI_IMAGE_TAG (default .../vk-cri/vk-cri:latest)
#   hack/image.sh runtime         the runtime bundle the chart runs by default: vk-cri plus
#                                 busybox-static, containerd $CONTAINERD2_VERSION and its shim, runc
#                                 $RUNC_VERSION, crictl and the CNI plugins bridge, host-local and
#                                 loopback, with the shared libraries runc and the plugins load
#                                 (default .../vk-cri/vk-cri-runtime:latest)
#   VKCRI_IMAGE_LAYOUT=DIR ...    also write it as an OCI layout directory
#   VKCRI_IMAGE_VERSION=V ...     the version label (default: bin/vk-cri --version)
# Everything comes from this machine's cache and packages: nothing is downloaded.
# The local registry keeps images in memory: after `hack/registry.sh restart`, push again.
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"

kind=${1:-minimal}
IMAGE_TOOL=${VKCRI_IMAGE_TOOL:-$TOOLS_DIR/image}
VKCRI_BIN=${VKCRI_BIN:-$REPO_DIR/bin/vk-cri}
case "$kind" in
  minimal) VKCRI_IMAGE_REPO=${VKCRI_IMAGE_REPO:-$REGISTRY/vk-cri/vk-cri} ;;
  runtime) VKCRI_IMAGE_REPO=${VKCRI_IMAGE_REPO:-$REGISTRY/vk-cri/vk-cri-runtime} ;;
  *) die "usage: $0 [minimal|runtime]" ;;
esac
VKCRI_IMAGE_TAG=${VKCRI_IMAGE_TAG:-latest}

[[ -x "$VKCRI_BIN" ]] || die "$VKCRI_BIN not built: run make build"
if [[ ! -x "$IMAGE_TOOL" || -n "$(find "$REPO_DIR/hack/tools" -type f -newer "$IMAGE_TOOL" -print -quit)" ]]; then
  log "building the image tool into $IMAGE_TOOL"
  mkdir -p "$TOOLS_DIR"
  (cd "$REPO_DIR/hack/tools" && CGO_ENABLED=0 GOTOOLCHAIN=local \
    go build -mod=readonly -buildvcs=false -trimpath -ldflags '-s -w' -o "$IMAGE_TOOL.tmp" ./image) \
    || { rm -f "$IMAGE_TOOL.tmp"; die "building hack/tools/image failed"; }
  mv -f "$IMAGE_TOOL.tmp" "$IMAGE_TOOL"
fi
# VKCRI_IMAGE_VERSION overrides the version label (the e2e makes two images of one binary).
version=${VKCRI_IMAGE_VERSION:-$("$VKCRI_BIN" --version 2>/dev/null | awk '{print $NF}')} || version=""
args=(--binary "$VKCRI_BIN" --ref "$VKCRI_IMAGE_REPO:$VKCRI_IMAGE_TAG" --version "$version")
[[ -z "${VKCRI_IMAGE_LAYOUT:-}" ]] || args+=(--oci-layout "$VKCRI_IMAGE_LAYOUT")

# add HOST IMAGE: one file of the runtime bundle; libs HOST: the shared libraries it loads, at
# the paths the dynamic loader looks them up (ldd's).
declare -A added=()
add() { [[ -n "${added[$2]:-}" ]] || { args+=(--add "$(realpath "$1")=$2"); added[$2]=1; }; }
libs() {
  local lib
  while read -r lib; do add "$lib" "${lib#/}"; done < <(ldd "$1" 2>/dev/null | grep -o '/[^ ]*' | sort -u)
}
if [[ "$kind" == runtime ]]; then
  busybox=$(command -v busybox) || die "busybox-static is not installed (hack/containerd.sh install)"
  file -L "$busybox" | grep -q 'statically linked' || die "$busybox is not static (install busybox-static)"
  args+=(--busybox "$busybox")
  for b in containerd containerd-shim-runc-v2; do
    [[ -x "$CONTAINERD2_BIN_DIR/$b" ]] || die "$CONTAINERD2_BIN_DIR/$b not built: run hack/build-containerd.sh"
    add "$CONTAINERD2_BIN_DIR/$b" "usr/local/bin/$b"
  done
  [[ -x "$RUNC_BIN_DIR/runc" ]] || die "$RUNC_BIN_DIR/runc not built: run hack/build-containerd.sh"
  add "$RUNC_BIN_DIR/runc" usr/local/sbin/runc
  libs "$RUNC_BIN_DIR/runc"
  [[ -x "$CRICTL" ]] || die "$CRICTL not built: run hack/containerd.sh install"
  add "$CRICTL" usr/local/bin/crictl
  for p in bridge host-local loopback; do
    add "$CNI_BIN_DIR/$p" "opt/cni/bin/$p"
    libs "$CNI_BIN_DIR/$p"
  done
fi
phase "vk-cri image ($kind)" "$IMAGE_TOOL" "${args[@]}"
