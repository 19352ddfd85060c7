#!/usr/bin/env bash
# Builds vk-cri's OCI image without Docker (hack/tools/image: the static bin/vk-cri on a minimal
# base) and pushes it to the local registry. Prints the image digest on stdout.
#   hack/image.sh                 push $VKCRI_IMAGE_REPO:$VKCRI_IMAGE_TAG (default latest)
#   VKCRI_IMAGE_LAYOUT=DIR ...    also write it as an OCI layout directory
# The local registry keeps images in memory: after `hack/registry.sh restart`, push again.
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"

IMAGE_TOOL="$TOOLS_DIR/image"
VKCRI_BIN=${VKCRI_BIN:-$REPO_DIR/bin/vk-cri}
VKCRI_IMAGE_REPO=${VKCRI_IMAGE_REPO:-$REGISTRY/vk-cri/vk-cri}
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
version=$("$VKCRI_BIN" --version 2>/dev/null | awk '{print $NF}') || version=""
args=(--binary "$VKCRI_BIN" --ref "$VKCRI_IMAGE_REPO:$VKCRI_IMAGE_TAG" --version "$version")
[[ -z "${VKCRI_IMAGE_LAYOUT:-}" ]] || args+=(--oci-layout "$VKCRI_IMAGE_LAYOUT")
phase "vk-cri image" "$IMAGE_TOOL" "${args[@]}"
