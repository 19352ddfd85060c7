#!/usr/bin/env bash
# Builds etcd and the Kubernetes control plane binaries (plus kubectl and kubelet) from the
# Go module proxy, in throwaway modules under the cache directory, never in the project's go.mod.
# Already-built binaries are kept in $BIN_DIR and reused.
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"

K8S_BINARIES=(kube-apiserver kube-controller-manager kube-scheduler kubectl)
if [[ "${WITH_KUBELET:-0}" == 1 ]]; then K8S_BINARIES+=(kubelet); fi

mkdir -p "$BIN_DIR"
missing=()
for b in etcd "${K8S_BINARIES[@]}"; do [[ -x "$BIN_DIR/$b" ]] || missing+=("$b"); done
if (( ${#missing[@]} == 0 )); then
  log "control plane binaries cached in $BIN_DIR"
  exit 0
fi
log "building ${missing[*]} into $BIN_DIR (a cold build takes about 9 minutes on 2 cores)"

export CGO_ENABLED=0 GOFLAGS=-mod=mod GOTOOLCHAIN=local

build_etcd() {
  local mod="$CACHE_DIR/src/etcd-$ETCD_VERSION"
  mkdir -p "$mod"
  cat >"$mod/go.mod" <<MOD
module vkcri.local/etcdbuild

go 1.26

require go.etcd.io/etcd/server/v3 $ETCD_VERSION
MOD
  cat >"$mod/tools.go" <<'GO'
//go:build tools

package tools

import _ "go.etcd.io/etcd/server/v3"
GO
  (cd "$mod" && go mod tidy >/dev/null 2>&1 || true
   cd "$mod" && go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" >/dev/null
   go build -trimpath -o "$BIN_DIR/etcd.tmp" go.etcd.io/etcd/server/v3) && mv "$BIN_DIR/etcd.tmp" "$BIN_DIR/etcd"
}

k8s_module() {
  local mod="$CACHE_DIR/src/kubernetes-$K8S_VERSION"
  if [[ -f "$mod/go.sum" ]]; then echo "$mod"; return; fi
  mkdir -p "$mod"
  local kdir
  kdir=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
  [[ -n "$kdir" ]] || die "could not download k8s.io/kubernetes@$K8S_VERSION"
  {
    echo "module vkcri.local/k8sbuild"
    echo
    echo "go 1.26"
    echo
    echo "require k8s.io/kubernetes $K8S_VERSION"
    echo
    echo "replace ("
    # Every staging module the kubernetes go.mod points at ./staging is taken from the proxy instead.
    sed -n 's#^\s*\(k8s.io/[a-z0-9-]*\) => ./staging/src/.*#\t\1 => \1 '"$K8S_STAGING_VERSION"'#p' "$kdir/go.mod"
    echo ")"
  } >"$mod/go.mod"
  cat >"$mod/tools.go" <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubelet"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
GO
  (cd "$mod" && go mod tidy >&2) || die "go mod tidy failed in $mod"
  echo "$mod"
}

build_k8s() {
  local name=$1 mod=$2
  local pkg="k8s.io/kubernetes/cmd/$name"
  local ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION"
  ldflags+=" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37"
  ldflags+=" -X k8s.io/component-base/version.gitTreeState=clean"
  ldflags+=" -X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION"
  ldflags+=" -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=37"
  (cd "$mod" && go build -trimpath -ldflags "$ldflags" -o "$BIN_DIR/$name.tmp" "$pkg") && mv "$BIN_DIR/$name.tmp" "$BIN_DIR/$name"
}

for b in "${missing[@]}"; do
  if [[ "$b" == etcd ]]; then
    run_with_progress "building etcd $ETCD_VERSION" build_etcd
  fi
done
if [[ " ${missing[*]} " != " etcd " ]]; then
  log "resolving k8s.io/kubernetes $K8S_VERSION modules"
  mod=$(k8s_module)
  for b in "${missing[@]}"; do
    [[ "$b" == etcd ]] && continue
    run_with_progress "building $b $K8S_VERSION" build_k8s "$b" "$mod"
  done
fi
log "binaries ready in $BIN_DIR: $(ls "$BIN_DIR" | tr '\n' ' ')"
