#!/usr/bin/env bash
# Builds CRI-O from the Go module proxy, in a throwaway module under the cache directory (never in
# the project's go.mod), like hack/build-containerd.sh:
#
#   $CRIO_BIN_DIR/crio    github.com/cri-o/cri-o/cmd/crio $CRIO_VERSION with cgo, Debian's
#                         libseccomp-dev (build tag seccomp: CRI-O applies seccomp profiles) and
#                         libgpgme-dev (image signature verification through gpgme, as CRI-O's
#                         Makefile builds it when gpgme is there). Its CRI Version RPC reports
#                         internal/version.Version, a constant of the release, so nodes report
#                         cri-o://1.36.3; the ldflags add the build date and the release as the
#                         commit (`crio version`), as CRI-O's Makefile sets buildDate/buildCommit.
#   $CRIO_BIN_DIR/pinns   CRI-O's small C helper that creates and pins the pod's namespaces
#                         (CRI-O refuses to start without it, config key pinns_path). It is in the
#                         same module (pinns/src/*.c) and is built with gcc -static, as
#                         pinns/Makefile does.
#
# v1.36.3 is the newest CRI-O release the Go module proxy serves here (its go.mod wants Go 1.26.3;
# no replace directives). conmon (2.1.6) is Debian's package; runc is hack/build-containerd.sh's.
# A binary already there is reused; a new version builds next to the old.
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gobuild.sh"

export GOTOOLCHAIN=local GOFLAGS=-mod=mod

CRIO_MODULE=github.com/cri-o/cri-o
CRIO_SRC_MOD="$CACHE_DIR/src/cri-o-$CRIO_VERSION"

# crio_build_tags: CRI-O's Makefile picks its tags by probing the machine (hack/*_tag.sh); the
# same choices for Debian 12 with the packages apt_ensure installs: no btrfs headers
# (exclude_graphdriver_btrfs btrfs_noversion), no ostree, seccomp, no apparmor/selinux/libsubid
# development files (those features are not used on this machine).
crio_build_tags() {
  echo "containers_image_ostree_stub exclude_graphdriver_btrfs btrfs_noversion seccomp"
}

build_crio() {
  throwaway_module "$CRIO_SRC_MOD" "$CRIO_MODULE" "$CRIO_VERSION" "$CRIO_MODULE/cmd/crio"
  local ldflags="-s -w -X $CRIO_MODULE/internal/version.buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  ldflags+=" -X $CRIO_MODULE/internal/version.buildCommit=$CRIO_VERSION"
  mkdir -p "$CRIO_BIN_DIR"
  (cd "$CRIO_SRC_MOD" && CGO_ENABLED=1 go build -trimpath -tags "$(crio_build_tags)" -ldflags "$ldflags" \
      -o "$CRIO_BIN_DIR/crio.tmp" "$CRIO_MODULE/cmd/crio") || return 1
  mv "$CRIO_BIN_DIR/crio.tmp" "$CRIO_BIN_DIR/crio"
}

build_pinns() {
  throwaway_module "$CRIO_SRC_MOD" "$CRIO_MODULE" "$CRIO_VERSION" "$CRIO_MODULE/cmd/crio"
  local src
  src=$(cd "$CRIO_SRC_MOD" && go list -m -f '{{.Dir}}' "$CRIO_MODULE") || return 1
  mkdir -p "$CRIO_BIN_DIR"
  # pinns/Makefile's flags: -std=c99 -Os -Wall -Werror -Wextra -static, objects with -O3.
  gcc -std=c99 -O3 -Wall -Wextra -static -o "$CRIO_BIN_DIR/pinns.tmp" "$src"/pinns/src/*.c || return 1
  strip -s "$CRIO_BIN_DIR/pinns.tmp"
  mv "$CRIO_BIN_DIR/pinns.tmp" "$CRIO_BIN_DIR/pinns"
}

if [[ ! -x "$CRIO_BIN_DIR/crio" || ! -x "$CRIO_BIN_DIR/pinns" ]]; then
  apt_ensure gcc libc6-dev binutils pkg-config libseccomp-dev libgpgme-dev
fi
if [[ ! -x "$CRIO_BIN_DIR/crio" ]]; then
  run_with_progress "building CRI-O $CRIO_VERSION into $CRIO_BIN_DIR" build_crio
else
  log "CRI-O $CRIO_VERSION cached in $CRIO_BIN_DIR"
fi
if [[ ! -x "$CRIO_BIN_DIR/pinns" ]]; then
  run_with_progress "building pinns $CRIO_VERSION into $CRIO_BIN_DIR" build_pinns
fi
log "crio: $("$CRIO_BIN_DIR/crio" version 2>/dev/null | sed -n "s/^Version: *//p")"
