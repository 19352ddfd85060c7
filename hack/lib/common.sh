# Shared settings for the hack/ scripts. Sourced, never run.
# Everything the local stack creates lives under STACK_DIR (run-time state) or
# CACHE_DIR (build products kept between runs, outside the clone so CI reuses them).

HACK_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REPO_DIR=$(cd "$HACK_DIR/.." && pwd)
CACHE_DIR=${VKCRI_CACHE_DIR:-/var/cache/vk-cri}
STACK_DIR=${VKCRI_STACK_DIR:-/var/run/vk-cri-stack}
# Where the containerd instances live: a second control plane (hack/conformance-plane.sh) has a
# STACK_DIR of its own but uses the main stack's runtime.
RUNTIME_STACK_DIR=${VKCRI_RUNTIME_STACK_DIR:-$STACK_DIR}

K8S_VERSION=v1.37.2
K8S_STAGING_VERSION=v0.37.2
ETCD_VERSION=v3.7.3
BIN_DIR="$CACHE_DIR/bin/$K8S_VERSION"

# Ports on 127.0.0.1.
ETCD_PORT=${ETCD_PORT:-23790}
ETCD_PEER_PORT=${ETCD_PEER_PORT:-23800}
APISERVER_PORT=${APISERVER_PORT:-16443}
REGISTRY_PORT=${REGISTRY_PORT:-5000}
# The bridge the pods of the vk-cri node live on.
CNI_BRIDGE=${CNI_BRIDGE:-vkcri0}
CNI_SUBNET=${CNI_SUBNET:-10.88.0.0/16}
CNI_GATEWAY=${CNI_GATEWAY:-10.88.0.1}

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# wait_for DESCRIPTION TIMEOUT_SECONDS COMMAND...: polls COMMAND until it succeeds.
wait_for() {
  local what=$1 timeout=$2; shift 2
  local start=$SECONDS
  until "$@" >/dev/null 2>&1; do
    if (( SECONDS - start >= timeout )); then
      log "timed out after ${timeout}s waiting for $what"
      return 1
    fi
    sleep 0.5
  done
}

# run_with_progress DESCRIPTION COMMAND...: prints elapsed time every 30 s while COMMAND runs.
# Its duration is recorded as a phase (phase_record).
run_with_progress() {
  local what=$1; shift
  local start=$SECONDS t0
  t0=$(date +%s%3N)
  log "$what ..."
  "$@" &
  local pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -0 "$pid" 2>/dev/null && log "  still $what ($((SECONDS - start))s elapsed)"
  done
  local rc=0
  wait "$pid" || rc=$?
  phase_record "$what" "$t0" "$rc"
  (( rc == 0 )) || die "$what failed"
  log "$what: done in $((SECONDS - start))s"
}

# ---------------------------------------------------------------------------------------------
# Phase times: each script that does a long step (apt installs, builds, image builds, the stack,
# the tests) appends a line "NAME<TAB>SECONDS<TAB>EXIT<TAB>START<TAB>PARENT" to PHASES_FILE when
# the step ends (SECONDS with one decimal, START in epoch milliseconds); hack/phases.sh summary
# prints them (make test does at its end, even when it fails). PARENT is the chain of enclosing phases (" > "-separated), passed to child processes
# in VKCRI_PHASE. Recording never fails the caller.
PHASES_FILE=${VKCRI_PHASES_FILE:-$REPO_DIR/_output/phases.tsv}
export VKCRI_PHASES_FILE=$PHASES_FILE
declare -gA _PHASE_T0=() _PHASE_OUTER=()

# phase_record NAME START_MS [EXIT]: appends NAME's line, its duration ending now.
phase_record() {
  local name=$1 t0=$2 rc=${3:-0} ms
  ms=$(( $(date +%s%3N) - t0 ))
  { mkdir -p "$(dirname "$PHASES_FILE")" &&
    printf '%s\t%d.%d\t%d\t%d\t%s\n' "${name//$'\t'/ }" "$((ms / 1000))" "$((ms % 1000 / 100))" "$rc" "$t0" \
      "${VKCRI_PHASE:-}" >>"$PHASES_FILE"
  } 2>/dev/null || true
}

# phase NAME COMMAND...: runs COMMAND as the phase NAME and returns its exit status. COMMAND
# should be an external command: a shell function run here runs without set -e.
phase() {
  local name=$1 t0 rc=0 outer=${VKCRI_PHASE:-}; shift
  t0=$(date +%s%3N)
  VKCRI_PHASE="${outer:+$outer > }$name" "$@" || rc=$?
  phase_record "$name" "$t0" "$rc"
  return "$rc"
}

# phase_begin NAME / phase_end NAME: one-line markers around a step inside a script (a step
# that fails under set -e is not recorded; the phase around the script is, with its status).
phase_begin() {
  _PHASE_T0[$1]=$(date +%s%3N)
  _PHASE_OUTER[$1]=${VKCRI_PHASE:-}
  export VKCRI_PHASE="${VKCRI_PHASE:+$VKCRI_PHASE > }$1"
}
phase_end() {
  [[ -n "${_PHASE_T0[$1]:-}" ]] || return 0
  VKCRI_PHASE=${_PHASE_OUTER[$1]}
  phase_record "$1" "${_PHASE_T0[$1]}" 0
  unset "_PHASE_T0[$1]" "_PHASE_OUTER[$1]"
}

# ensure_apt_packages PKG...: installs with apt-get those of the Debian packages that are not
# installed yet, as one recorded phase.
ensure_apt_packages() {
  local missing=() p
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  (( ${#missing[@]} )) || return 0
  log "installing ${missing[*]} with apt-get"
  phase_begin "apt-get install ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
  phase_end "apt-get install ${missing[*]}"
}

# ---------------------------------------------------------------------------------------------
# Local stack (containerd.sh, pki.sh, control-plane.sh, stack-up.sh, stack-down.sh).
LOG_DIR="$STACK_DIR/logs"
PKI_DIR="$STACK_DIR/pki"
CRI_TOOLS_VERSION=${CRI_TOOLS_VERSION:-v1.37.0}
CRICTL="$CACHE_DIR/bin/crictl-$CRI_TOOLS_VERSION"
KUBECTL="$BIN_DIR/kubectl"
# The helm CLI (hack/build-helm.sh), for the chart in charts/vk-cri.
HELM_VERSION=${HELM_VERSION:-v3.22.0}
HELM="$CACHE_DIR/bin/helm-$HELM_VERSION"
CNI_BIN_DIR=/usr/lib/cni
SERVICE_CIDR=${SERVICE_CIDR:-10.0.0.0/24}
SERVICE_IP=${SERVICE_IP:-10.0.0.1}
CONTROLLER_MANAGER_PORT=${CONTROLLER_MANAGER_PORT:-10257}
SCHEDULER_PORT=${SCHEDULER_PORT:-10259}
# The second containerd instance ("ref", for a reference upstream kubelet) and its bridge.
REF_CNI_BRIDGE=${REF_CNI_BRIDGE:-vkref0}
REF_CNI_SUBNET=${REF_CNI_SUBNET:-10.89.0.0/16}
REF_CNI_GATEWAY=${REF_CNI_GATEWAY:-10.89.0.1}
CONTAINERD_INSTANCES=(vk ref)

# The containerd lane both instances run: "2" (default) is containerd $CONTAINERD2_VERSION with runc
# $RUNC_VERSION built by hack/build-containerd.sh and Debian's crun as a second runtime handler;
# "1.6" is Debian's containerd 1.6 with Debian's runc. hack/containerd.sh records the lane an
# instance was started with in $CTRD_DIR/lane and stack-up.sh in $STACK_DIR/env (CONTAINERD_LANE).
VKCRI_CONTAINERD_SET=${VKCRI_CONTAINERD+set}
VKCRI_CONTAINERD=${VKCRI_CONTAINERD:-2}
CONTAINERD2_VERSION=${CONTAINERD2_VERSION:-v2.4.2}
RUNC_VERSION=${RUNC_VERSION:-v1.5.3}
CONTAINERD2_BIN_DIR="$CACHE_DIR/bin/containerd-$CONTAINERD2_VERSION"
RUNC_BIN_DIR="$CACHE_DIR/bin/runc-$RUNC_VERSION"
# CRI-O, the second real runtime (hack/build-crio.sh builds it, hack/crio.sh runs it): crio and
# pinns of $CRIO_VERSION; conmon and crun are Debian's packages, runc is $RUNC_BIN_DIR's.
CRIO_VERSION=${CRIO_VERSION:-v1.36.3}
CRIO_BIN_DIR="$CACHE_DIR/bin/cri-o-$CRIO_VERSION"

# The runtime of the stack's vk-cri nodes and of the reference kubelet: "containerd" (default; the
# lane is VKCRI_CONTAINERD) or "crio" (CRI-O $CRIO_VERSION, hack/crio.sh). hack/stack-up.sh
# records it in $STACK_DIR/env (CONTAINER_RUNTIME); hack/ref.sh follows the env.
VKCRI_RUNTIME_SET=${VKCRI_RUNTIME+set}
VKCRI_RUNTIME=${VKCRI_RUNTIME:-containerd}
# runtime_script RUNTIME: the hack/ script that runs instances of RUNTIME.
runtime_script() {
  case "$1" in
    containerd) echo "$HACK_DIR/containerd.sh" ;;
    crio) echo "$HACK_DIR/crio.sh" ;;
    *) die "unknown runtime '$1' (VKCRI_RUNTIME: containerd or crio)" ;;
  esac
}
# runtime_instance RUNTIME INSTANCE: sets RT_ENDPOINT, RT_GATEWAY and RT_SUBNET of one instance.
runtime_instance() {
  case "$1" in
    containerd) containerd_instance "$2"; RT_ENDPOINT=$CTRD_ENDPOINT RT_GATEWAY=$CTRD_GATEWAY RT_SUBNET=$CTRD_SUBNET ;;
    crio) crio_instance "$2"; RT_ENDPOINT=$CRIO_ENDPOINT RT_GATEWAY=$CRIO_GATEWAY RT_SUBNET=$CRIO_SUBNET ;;
    *) die "unknown runtime '$1' (VKCRI_RUNTIME: containerd or crio)" ;;
  esac
}

# crio_instance INSTANCE: sets CRIO_INSTANCE, CRIO_DIR (config, sockets, run-time state, its PID
# file and log; under VKCRI_CRIO_RUN_DIR when set, else beside the containerd instances),
# CRIO_STORAGE (containers/storage: images and container layers; under VKCRI_CRIO_STORAGE_DIR when
# set, e.g. on another disk), CRIO_SOCK, CRIO_ENDPOINT, CRIO_BRIDGE, CRIO_SUBNET, CRIO_GATEWAY,
# CRIO_CNI_NETWORK and CRIO_PIDNAME for one CRI-O instance. Bridges and subnets of their own, so
# that CRI-O instances run next to the containerd ones: vk vkcrio0 10.90.0.0/16, ref vkcrioref0
# 10.91.0.0/16.
crio_instance() {
  CRIO_INSTANCE=$1
  case "$CRIO_INSTANCE" in
    vk) CRIO_BRIDGE=vkcrio0 CRIO_SUBNET=10.90.0.0/16 CRIO_GATEWAY=10.90.0.1 ;;
    ref) CRIO_BRIDGE=vkcrioref0 CRIO_SUBNET=10.91.0.0/16 CRIO_GATEWAY=10.91.0.1 ;;
    *) die "unknown CRI-O instance '$CRIO_INSTANCE' (known: vk ref)" ;;
  esac
  CRIO_DIR="${VKCRI_CRIO_RUN_DIR:-$RUNTIME_STACK_DIR}/crio-$CRIO_INSTANCE"
  CRIO_STORAGE="$CRIO_DIR/storage"
  [[ -z "${VKCRI_CRIO_STORAGE_DIR:-}" ]] || CRIO_STORAGE="$VKCRI_CRIO_STORAGE_DIR/crio-$CRIO_INSTANCE"
  # Not "crio.sock": the kubelet takes an endpoint ending in crio.sock for CRI-O at its standard
  # path and then reads container stats from cAdvisor's CRI-O handler, which only talks to
  # /var/run/crio/crio.sock (cadvisor.UsingLegacyCadvisorStats, pkg/kubelet/cadvisor/util.go);
  # any other name makes it read them through CRI (ListContainerStats), which works here.
  CRIO_SOCK="$CRIO_DIR/runtime.sock"
  CRIO_ENDPOINT="unix://$CRIO_SOCK"
  CRIO_PIDNAME="crio-$CRIO_INSTANCE"
  CRIO_CNI_NETWORK=${VKCRI_CNI_NETWORK_PREFIX:-vk-cri}-crio-$CRIO_INSTANCE
}

# containerd_instance INSTANCE: sets CTRD_INSTANCE, CTRD_DIR, CTRD_SOCK, CTRD_ENDPOINT,
# CTRD_BRIDGE, CTRD_SUBNET, CTRD_GATEWAY and CTRD_PIDNAME for one containerd instance.
containerd_instance() {
  CTRD_INSTANCE=$1
  case "$CTRD_INSTANCE" in
    vk) CTRD_BRIDGE=$CNI_BRIDGE CTRD_SUBNET=$CNI_SUBNET CTRD_GATEWAY=$CNI_GATEWAY ;;
    ref) CTRD_BRIDGE=$REF_CNI_BRIDGE CTRD_SUBNET=$REF_CNI_SUBNET CTRD_GATEWAY=$REF_CNI_GATEWAY ;;
    *) die "unknown containerd instance '$CTRD_INSTANCE' (known: ${CONTAINERD_INSTANCES[*]})" ;;
  esac
  CTRD_DIR="$RUNTIME_STACK_DIR/containerd-$CTRD_INSTANCE"
  CTRD_SOCK="$CTRD_DIR/containerd.sock"
  CTRD_ENDPOINT="unix://$CTRD_SOCK"
  CTRD_PIDNAME="containerd-$CTRD_INSTANCE"
  CTRD_CNI_NETWORK=${VKCRI_CNI_NETWORK_PREFIX:-vk-cri}-$CTRD_INSTANCE
  # The lane this instance was started with (recorded by hack/containerd.sh start), else the
  # requested one: stop/kill/status of a running instance use its own lane's binaries.
  if [[ -f "$CTRD_DIR/lane" ]]; then CTRD_LANE=$(<"$CTRD_DIR/lane"); else CTRD_LANE=$VKCRI_CONTAINERD; fi
  containerd_lane "$CTRD_LANE"
}

# containerd_lane LANE: sets CTRD_LANE and the binaries of that lane: CTRD_CONTAINERD, CTRD_CTR,
# CTRD_RUNC, CTRD_CRUN (empty when the lane has no crun handler) and CTRD_PATH (the PATH containerd
# runs with: containerd looks its shim up on PATH before its own directory, so the 2.x shim must
# come before Debian's 1.6 one in /usr/bin).
containerd_lane() {
  CTRD_LANE=$1
  case "$CTRD_LANE" in
    2)
      CTRD_CONTAINERD="$CONTAINERD2_BIN_DIR/containerd"
      CTRD_CTR="$CONTAINERD2_BIN_DIR/ctr"
      CTRD_RUNC="$RUNC_BIN_DIR/runc"
      CTRD_CRUN=/usr/bin/crun
      CTRD_PATH="$CONTAINERD2_BIN_DIR:$RUNC_BIN_DIR:$PATH"
      ;;
    1.6)
      CTRD_CONTAINERD=/usr/bin/containerd
      CTRD_CTR=/usr/bin/ctr
      CTRD_RUNC=/usr/bin/runc
      CTRD_CRUN=
      CTRD_PATH=$PATH
      ;;
    *) die "unknown containerd lane '$CTRD_LANE' (VKCRI_CONTAINERD: 2 or 1.6)" ;;
  esac
}

# pid_of NAME: prints the PID recorded in $STACK_DIR/NAME.pid if that process is alive.
pid_of() {
  local f="$STACK_DIR/$1.pid" pid state
  [[ -f "$f" ]] || return 1
  pid=$(<"$f")
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  [[ -r "/proc/$pid/stat" ]] || return 1
  state=$(sed 's/^.*) \(.\).*/\1/' "/proc/$pid/stat" 2>/dev/null) || return 1
  [[ "$state" != Z ]] || return 1
  echo "$pid"
}

# is_running NAME: true if the process recorded in $STACK_DIR/NAME.pid is alive.
is_running() { pid_of "$1" >/dev/null; }

# start_bg NAME COMMAND...: starts COMMAND in its own session (setsid), stdin from /dev/null,
# output appended to $LOG_DIR/NAME.log, PID (of COMMAND itself) in $STACK_DIR/NAME.pid.
start_bg() {
  local name=$1; shift
  mkdir -p "$LOG_DIR"
  rm -f "$STACK_DIR/$name.pid"
  printf '\n=== %s starting: %s\n' "$(date -Is)" "$*" >>"$LOG_DIR/$name.log"
  # The shell writes its own PID, then execs COMMAND, so the PID file is right whether or not
  # setsid had to fork.
  setsid bash -c 'echo $$ >"$1"; shift; exec "$@"' start_bg "$STACK_DIR/$name.pid" "$@" \
    </dev/null >>"$LOG_DIR/$name.log" 2>&1 &
  local i
  for i in $(seq 1 50); do [[ -s "$STACK_DIR/$name.pid" ]] && return 0; sleep 0.1; done
  die "$name did not start (see $LOG_DIR/$name.log)"
}

# stop_bg NAME [TIMEOUT_SECONDS]: SIGTERM, then SIGKILL after TIMEOUT (default 15), the
# process recorded in $STACK_DIR/NAME.pid; waits until it is gone and removes the PID file.
stop_bg() {
  local name=$1 timeout=${2:-15} pid start
  if pid=$(pid_of "$name"); then
    log "stopping $name (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    start=$SECONDS
    while [[ -e "/proc/$pid" ]] && is_running "$name"; do
      if (( SECONDS - start >= timeout )); then
        log "$name (pid $pid) still running after ${timeout}s: SIGKILL"
        kill -KILL "$pid" 2>/dev/null || true
        sleep 0.2
        start=$SECONDS timeout=10
      fi
      sleep 0.1
    done
  fi
  rm -f "$STACK_DIR/$name.pid"
}

# unmount_under DIR: lazily unmounts everything mounted at or below DIR, deepest first.
unmount_under() {
  local dir=$1 mp
  [[ -n "$dir" && "$dir" == /* ]] || return 0
  # Mount points are listed with symlinks resolved (/var/run is a symlink to /run).
  dir=$(realpath -m "$dir")
  [[ "$dir" != / ]] || return 0
  local mps=()
  while IFS= read -r mp; do
    # /proc/self/mountinfo escapes space, tab, newline and backslash as octal.
    mp=$(printf '%b' "${mp//\\/\\0}")
    if [[ "$mp" == "$dir" || "$mp" == "$dir"/* ]]; then mps+=("$mp"); fi
  done < <(awk '{print $5}' /proc/self/mountinfo)
  (( ${#mps[@]} )) || return 0
  # Deepest first: sort by the number of path components, descending; repeat each path as
  # many times as it is mounted (stacked mounts).
  while IFS= read -r mp; do
    [[ -n "$mp" ]] || continue
    log "unmounting $mp"
    umount -l "$mp" 2>/dev/null || log "  (umount -l $mp failed)"
  done < <(for mp in "${mps[@]}"; do printf '%s\t%s\n' "$(tr -cd / <<<"$mp" | wc -c)" "$mp"; done \
             | sort -t $'\t' -k1,1nr -s | cut -f2-)
}

# kubectl_admin ARGS...: the v1.37 kubectl with the admin kubeconfig.
kubectl_admin() { "$KUBECTL" --kubeconfig "$PKI_DIR/admin.kubeconfig" "$@"; }

# ---------------------------------------------------------------------------------------------
# Local OCI registry (registry.sh) and the test images it serves, built offline by
# hack/tools/registry from busybox-static and test/images/vktest.
REGISTRY="127.0.0.1:$REGISTRY_PORT"
PAUSE_IMAGE="$REGISTRY/vk-cri/pause:3.10"
BUSYBOX_IMAGE="$REGISTRY/vk-cri/busybox:1.36"
VKTEST_IMAGE="$REGISTRY/vk-cri/vktest:latest"
HTTPD_IMAGE="$REGISTRY/vk-cri/httpd:latest"
TOOLS_DIR="$CACHE_DIR/tools"
