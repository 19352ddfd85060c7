#!/usr/bin/env bash
# Builds metrics-server from the Go module proxy in a throwaway module under the cache directory
# (never in the project's go.mod) and keeps the binary in $BIN_DIR/metrics-server-$VERSION.
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"

METRICS_SERVER_VERSION=${METRICS_SERVER_VERSION:-v0.8.0}
out="$CACHE_DIR/bin/metrics-server-$METRICS_SERVER_VERSION"
if [[ -x "$out" ]]; then
  log "metrics-server $METRICS_SERVER_VERSION cached in $out"
  exit 0
fi
mod="$CACHE_DIR/src/metrics-server-$METRICS_SERVER_VERSION"
mkdir -p "$mod" "$(dirname "$out")"
cat >"$mod/go.mod" <<MOD
module vkcri.local/metricsserverbuild

go 1.26
MOD
export CGO_ENABLED=0 GOFLAGS=-mod=mod GOTOOLCHAIN=local
build() {
  cd "$mod"
  go get -tool "sigs.k8s.io/metrics-server/cmd/metrics-server@$METRICS_SERVER_VERSION" >/dev/null
  go build -trimpath -o "$out.tmp" \
    -ldflags "-X sigs.k8s.io/metrics-server/pkg/version.gitVersion=$METRICS_SERVER_VERSION" \
    sigs.k8s.io/metrics-server/cmd/metrics-server
  mv "$out.tmp" "$out"
}
run_with_progress "building metrics-server $METRICS_SERVER_VERSION (cold: a few minutes)" build
