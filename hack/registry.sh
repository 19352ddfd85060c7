#!/usr/bin/env bash
# Local OCI registry with vk-cri's test images, on 127.0.0.1:$REGISTRY_PORT only.
#
#   hack/registry.sh start     build the tools if needed, start the registry, wait until it serves
#   hack/registry.sh stop      stop it (no-op when it is not running)
#   hack/registry.sh status    exit 0 iff it is running
#   hack/registry.sh restart   stop, then start (picks up rebuilt images)
#   hack/registry.sh build     only build the tools
#
# Images (built by hack/tools/registry at each start, in memory, same digests for the same
# inputs): $PAUSE_IMAGE, $BUSYBOX_IMAGE (also :latest), $VKTEST_IMAGE, $HTTPD_IMAGE.
# Binaries go to $TOOLS_DIR, the PID to $STACK_DIR/registry.pid, the log to
# $STACK_DIR/logs/registry.log. Works from any working directory.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib/common.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib/common.sh"

VKTEST_BIN="$TOOLS_DIR/vktest"
REGISTRY_BIN="$TOOLS_DIR/registry"
REGISTRY_BUSYBOX=${BUSYBOX_BIN:-/bin/busybox}
REGISTRY_READY_URL="http://$REGISTRY/v2/vk-cri/busybox/manifests/latest"
REGISTRY_START_TIMEOUT=120

# needs_build BIN SOURCE...: true when BIN is missing or a file under SOURCE is newer.
needs_build() {
  local bin=$1; shift
  [[ -x "$bin" ]] || return 0
  [[ -n "$(find "$@" -type f -newer "$bin" -print -quit)" ]]
}

# go_build DIR OUT PACKAGE: a static, reproducible build in DIR, installed atomically as OUT.
go_build() {
  local dir=$1 out=$2 pkg=$3
  (cd "$dir" && CGO_ENABLED=0 GOTOOLCHAIN=local \
    go build -mod=readonly -buildvcs=false -trimpath -ldflags '-s -w' -o "$out.tmp" "$pkg") \
    || { rm -f "$out.tmp"; die "building $pkg in $dir failed"; }
  mv -f "$out.tmp" "$out"
}

build_tools() {
  command -v go >/dev/null || die "go is not on PATH"
  mkdir -p "$TOOLS_DIR"
  if needs_build "$VKTEST_BIN" "$REPO_DIR/test/images/vktest"; then
    log "building vktest into $VKTEST_BIN"
    go_build "$REPO_DIR" "$VKTEST_BIN" ./test/images/vktest
  fi
  if needs_build "$REGISTRY_BIN" "$REPO_DIR/hack/tools"; then
    log "building the registry tool into $REGISTRY_BIN"
    go_build "$REPO_DIR/hack/tools" "$REGISTRY_BIN" ./registry
  fi
}

# registry_pid prints the PID of our running registry; fails when it is not running.
registry_pid() {
  local pid
  pid=$(pid_of registry) || return 1
  # Guard against a recycled PID: the process must be our registry binary.
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "--vktest-bin" || return 1
  echo "$pid"
}

registry_answers() {
  if command -v curl >/dev/null; then
    curl -fsS --max-time 2 -o /dev/null "$REGISTRY_READY_URL"
  else
    "$REGISTRY_BUSYBOX" wget -q -T 2 -O /dev/null "$REGISTRY_READY_URL"
  fi
}

cmd_start() {
  local pid
  if pid=$(registry_pid); then
    log "registry already running (pid $pid) on $REGISTRY"
    return 0
  fi
  rm -f "$STACK_DIR/registry.pid"
  [[ -x "$REGISTRY_BUSYBOX" ]] \
    || die "$REGISTRY_BUSYBOX not found: apt-get install -y --no-install-recommends busybox-static"
  if registry_answers >/dev/null 2>&1; then
    die "something else already serves $REGISTRY_READY_URL (not our registry: no live PID in $STACK_DIR/registry.pid)"
  fi
  build_tools

  log "starting the registry on $REGISTRY (log: $LOG_DIR/registry.log)"
  mkdir -p "$LOG_DIR"
  local log_offset
  log_offset=$(stat -c %s "$LOG_DIR/registry.log" 2>/dev/null || echo 0)
  start_bg registry "$REGISTRY_BIN" --addr "$REGISTRY" --vktest-bin "$VKTEST_BIN" \
    --busybox "$REGISTRY_BUSYBOX"

  # Ready when this process has logged "ready" (after pushing its images) and it answers.
  local start=$SECONDS
  until tail -c +"$((log_offset + 1))" "$LOG_DIR/registry.log" | grep -q "ready on http://" \
      && registry_answers >/dev/null 2>&1; do
    if ! is_running registry; then
      tail -n 20 "$LOG_DIR/registry.log" >&2 || true
      rm -f "$STACK_DIR/registry.pid"
      die "the registry exited during start-up (see $LOG_DIR/registry.log)"
    fi
    if (( SECONDS - start >= REGISTRY_START_TIMEOUT )); then
      tail -n 20 "$LOG_DIR/registry.log" >&2 || true
      stop_bg registry 10
      die "the registry did not answer $REGISTRY_READY_URL within ${REGISTRY_START_TIMEOUT}s"
    fi
    sleep 0.2
  done
  log "registry ready on $REGISTRY (pid $(pid_of registry)) after $((SECONDS - start))s"
}

cmd_stop() {
  if ! registry_pid >/dev/null; then
    rm -f "$STACK_DIR/registry.pid"
    log "registry not running"
    return 0
  fi
  stop_bg registry 10
}

cmd_status() {
  local pid
  if pid=$(registry_pid); then
    echo "registry running (pid $pid) on $REGISTRY"
    return 0
  fi
  echo "registry not running"
  return 1
}

case "${1:-}" in
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  restart) cmd_stop; cmd_start ;;
  build) build_tools ;;
  *) echo "usage: $0 start|stop|status|restart|build" >&2; exit 2 ;;
esac
