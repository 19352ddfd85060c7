#!/usr/bin/env bash
# Builds the helm CLI from the Go module proxy, in a throwaway module under the cache directory
# (never in the project's go.mod), and keeps it in $CACHE_DIR/bin/helm-$HELM_VERSION.
#   hack/build-helm.sh          build it if it is not cached; prints its path
# A cold build takes about 3 minutes on 2 cores (module download plus compile); cached, it is
# instant.
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"

if [[ -x "$HELM" ]]; then
  echo "$HELM"
  exit 0
fi

export CGO_ENABLED=0 GOFLAGS=-mod=mod GOTOOLCHAIN=local

build_helm() {
  local mod="$CACHE_DIR/src/helm-$HELM_VERSION"
  mkdir -p "$mod" "$(dirname "$HELM")"
  cat >"$mod/go.mod" <<MOD
module vkcri.local/helmbuild

go 1.26

require helm.sh/helm/v3 $HELM_VERSION
MOD
  cat >"$mod/tools.go" <<'GO'
//go:build tools

package tools

import _ "helm.sh/helm/v3/cmd/helm"
GO
  # helm reports its version from these variables; without them `helm version` says v3.0.0+unknown.
  local ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION"
  ldflags+=" -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
  (cd "$mod" && go mod tidy >&2 \
    && go build -trimpath -ldflags "$ldflags" -o "$HELM.tmp" helm.sh/helm/v3/cmd/helm) \
    || { rm -f "$HELM.tmp"; return 1; }
  mv -f "$HELM.tmp" "$HELM"
}

run_with_progress "building helm $HELM_VERSION" build_helm
"$HELM" version --short >&2
echo "$HELM"
