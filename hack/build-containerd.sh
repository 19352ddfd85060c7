#!/usr/bin/env bash
# Builds the containerd 2.x lane's runtime from the Go module proxy, in throwaway modules under
# the cache directory (never in the project's go.mod), like hack/build-k8s.sh:
#
#   $CONTAINERD2_BIN_DIR  containerd, containerd-shim-runc-v2 and ctr of containerd
#                         $CONTAINERD2_VERSION, CGO_ENABLED=0, with the version ldflags set so that
#                         nodes report containerd://2.x.y (without them: 2.x.y+unknown);
#   $RUNC_BIN_DIR         runc $RUNC_VERSION, with cgo and Debian's libseccomp-dev (installed with
#                         apt-get when missing): user namespaces need runc 1.2 or newer (idmapped
#                         mounts), Debian's runc is 1.1.5.
#
# Versioned directories: a binary already there is reused; a new version builds next to the old.
# crun, the second runtime handler, is Debian's package (hack/containerd.sh install).
# Measured on 2 cores: see the commit that added this script.
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gobuild.sh"

export GOTOOLCHAIN=local GOFLAGS=-mod=mod

CONTAINERD2_BINARIES=(containerd containerd-shim-runc-v2 ctr)

containerd2_missing() {
  local b
  for b in "${CONTAINERD2_BINARIES[@]}"; do [[ -x "$CONTAINERD2_BIN_DIR/$b" ]] || return 0; done
  return 1
}

build_containerd2() {
  local mod="$CACHE_DIR/src/containerd-$CONTAINERD2_VERSION"
  local pkg=github.com/containerd/containerd/v2
  throwaway_module "$mod" "$pkg" "$CONTAINERD2_VERSION" "$pkg/cmd/containerd" "$pkg/cmd/containerd-shim-runc-v2" "$pkg/cmd/ctr"
  # As containerd's Makefile: version.Version/Package (CRI's Version RPC reports Version), tag
  # urfave_cli_no_docs, and no_grpc for the shim. CGO_ENABLED=0 leaves out btrfs and pkcs11,
  # which this stack does not use.
  local ldflags="-s -w -X $pkg/version.Version=$CONTAINERD2_VERSION -X $pkg/version.Package=$pkg"
  mkdir -p "$CONTAINERD2_BIN_DIR"
  local b tags
  for b in "${CONTAINERD2_BINARIES[@]}"; do
    [[ -x "$CONTAINERD2_BIN_DIR/$b" ]] && continue
    tags=urfave_cli_no_docs
    [[ "$b" == containerd-shim-runc-v2 ]] && tags+=",no_grpc"
    (cd "$mod" && CGO_ENABLED=0 go build -trimpath -tags "$tags" -ldflags "$ldflags" \
        -o "$CONTAINERD2_BIN_DIR/$b.tmp" "$pkg/cmd/$b") || return 1
    mv "$CONTAINERD2_BIN_DIR/$b.tmp" "$CONTAINERD2_BIN_DIR/$b"
  done
}

ensure_libseccomp_dev() {
  if dpkg -s libseccomp-dev >/dev/null 2>&1 && command -v gcc >/dev/null && command -v pkg-config >/dev/null; then
    return 0
  fi
  log "installing libseccomp-dev, gcc and pkg-config with apt-get (runc needs cgo and libseccomp)"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libseccomp-dev gcc libc6-dev pkg-config >&2
}

build_runc() {
  local mod="$CACHE_DIR/src/runc-$RUNC_VERSION"
  throwaway_module "$mod" github.com/opencontainers/runc "$RUNC_VERSION" github.com/opencontainers/runc
  mkdir -p "$RUNC_BIN_DIR"
  # runc's Makefile builds with tags seccomp, urfave_cli_no_docs and libpathrs; libpathrs is a Rust
  # library Debian 12 does not have, and without the tag runc uses its Go fallback (pathrs-lite).
  # The version comes from runc's embedded VERSION file.
  (cd "$mod" && CGO_ENABLED=1 go build -trimpath -buildmode=pie -tags "seccomp urfave_cli_no_docs" \
      -ldflags "-X main.gitCommit=$RUNC_VERSION" -o "$RUNC_BIN_DIR/runc.tmp" github.com/opencontainers/runc) || return 1
  mv "$RUNC_BIN_DIR/runc.tmp" "$RUNC_BIN_DIR/runc"
}

if containerd2_missing; then
  run_with_progress "building containerd $CONTAINERD2_VERSION into $CONTAINERD2_BIN_DIR" build_containerd2
else
  log "containerd $CONTAINERD2_VERSION cached in $CONTAINERD2_BIN_DIR"
fi
if [[ ! -x "$RUNC_BIN_DIR/runc" ]]; then
  ensure_libseccomp_dev
  run_with_progress "building runc $RUNC_VERSION into $RUNC_BIN_DIR" build_runc
else
  log "runc $RUNC_VERSION cached in $RUNC_BIN_DIR"
fi
log "containerd: $("$CONTAINERD2_BIN_DIR/containerd" --version)"
log "runc: $("$RUNC_BIN_DIR/runc" --version | head -n 1)"
