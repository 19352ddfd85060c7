#!/usr/bin/env bash
# The Kubernetes e2e NodeConformance suite (v1.37.2) against one node of the local stack.
#
#   hack/conformance.sh build           build e2e.test, ginkgo, agnhost and the other test binaries
#                                       (cached in $BIN_DIR) and the helpers of hack/conformance
#   hack/conformance.sh images          build + push the stand-in test images into the local registry,
#                                       write the containerd registry redirects (idempotent)
#   hack/conformance.sh run NODE        build + images, then run the suite against NODE: NODE is the
#                                       only schedulable node for the run (every other node is
#                                       cordoned, also the ones registering meanwhile, and uncordoned
#                                       afterwards, also on failure or interrupt); JUnit XML, log and
#                                       summary.txt in _output/conformance/NODE/
#   hack/conformance.sh summary NODE    (re)writes _output/conformance/NODE/summary.txt from the JUnit XML
#   hack/conformance.sh compare VK REF  both tallies side by side, and the specs that pass on REF and
#                                       fail on VK
#   hack/conformance.sh uncordon        undo the cordons of a run that was killed (SIGKILL)
#
# Settings (environment):
#   CONFORMANCE_FOCUS    ginkgo focus regexp (default '\[NodeConformance\]')
#   CONFORMANCE_SKIP     ginkgo skip regexp (default
#                        '\[Serial\]|\[Disruptive\]|\[Flaky\]|\[Slow\]|\[Feature:|\[NodeFeature:')
#   CONFORMANCE_TIMEOUT  whole-suite timeout, a duration like 90m or 1h30m (default 90m)
#   CONFORMANCE_NODES    parallel ginkgo processes (default 4)
#   CONFORMANCE_OUT      output directory (default _output/conformance)
#
# Binaries are built from the Go module proxy in a throwaway module under $CACHE_DIR/src (never in
# the project's go.mod). The test images are offline stand-ins (hack/conformance/README.md) served
# by the local registry under the repository paths of the real ones; the suite gets
# hack/conformance/repo-list.yaml.in as KUBE_TEST_REPO_LIST, and the containerd instances get
# hosts.toml redirects of registry.k8s.io, docker.io and gcr.io to the local registry.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib/common.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib/common.sh"

CONF_DIR="$HACK_DIR/conformance"
CONF_MOD="$CACHE_DIR/src/conformance-$K8S_VERSION"
E2E_TEST="$BIN_DIR/e2e.test"
GINKGO="$BIN_DIR/ginkgo"
AGNHOST="$BIN_DIR/agnhost"
NNP="$BIN_DIR/nonewprivs"
CONF_TOOL="$TOOLS_DIR/conformance-tool"
PAUSE_BIN="$TOOLS_DIR/conformance-pause"
BASH_STATIC="$CACHE_DIR/conformance/bash-static"
NC_OPENBSD="$CACHE_DIR/conformance/nc.openbsd"
# Debian's busybox rebuilt for the stand-ins (see build_busybox).
CONF_BUSYBOX="$CACHE_DIR/conformance/busybox"
ADMIN_KUBECONFIG="$PKI_DIR/admin.kubeconfig"
CONFORMANCE_FOCUS=${CONFORMANCE_FOCUS:-'\[NodeConformance\]'}
CONFORMANCE_SKIP=${CONFORMANCE_SKIP:-'\[Serial\]|\[Disruptive\]|\[Flaky\]|\[Slow\]|\[Feature:|\[NodeFeature:'}
CONFORMANCE_TIMEOUT=${CONFORMANCE_TIMEOUT:-90m}
CONFORMANCE_NODES=${CONFORMANCE_NODES:-4}
CONFORMANCE_OUT=${CONFORMANCE_OUT:-$REPO_DIR/_output/conformance}
# Registries containerd redirects to the local one (hosts.toml in each instance's certs.d).
REDIRECTED_REGISTRIES=(registry.k8s.io docker.io gcr.io)

# ---------------------------------------------------------------------------------------------
# build

# conformance_module: the throwaway module the test binaries are built in. Like hack/build-k8s.sh's,
# it requires k8s.io/kubernetes and takes every staging module from the proxy; it also pins
# ginkgo to the version kubernetes' go.mod requires.
conformance_module() {
  local mod=$CONF_MOD
  if [[ -f "$mod/go.sum" && -f "$mod/.tidy-done" ]]; then return 0; fi
  mkdir -p "$mod"
  local kdir ginkgo_version
  kdir=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
  [[ -n "$kdir" ]] || die "could not download k8s.io/kubernetes@$K8S_VERSION"
  ginkgo_version=$(sed -n 's#^\s*github.com/onsi/ginkgo/v2 \(v[^ ]*\).*#\1#p' "$kdir/go.mod" | head -n1)
  [[ -n "$ginkgo_version" ]] || die "no github.com/onsi/ginkgo/v2 in $kdir/go.mod"
  {
    echo "module vkcri.local/conformancebuild"
    echo
    echo "go 1.26"
    echo
    echo "require ("
    echo "	k8s.io/kubernetes $K8S_VERSION"
    echo "	github.com/onsi/ginkgo/v2 $ginkgo_version"
    echo ")"
    echo
    echo "replace ("
    sed -n 's#^\s*\(k8s.io/[a-z0-9-]*\) => ./staging/src/.*#\t\1 => \1 '"$K8S_STAGING_VERSION"'#p' "$kdir/go.mod"
    echo ")"
  } >"$mod/go.mod"
  # The e2e suite's own imports (in e2e_test.go) are test-only: list them so that tidy records
  # everything `go test -c` needs.
  {
    echo "//go:build tools"
    echo
    echo "package tools"
    echo
    echo "import ("
    echo "	_ \"github.com/onsi/ginkgo/v2/ginkgo\""
    echo "	_ \"k8s.io/kubernetes/test/images/agnhost\""
    echo "	_ \"k8s.io/kubernetes/test/images/nonewprivs\""
    echo "	_ \"k8s.io/kubernetes/test/e2e\""
    sed -n '/^import (/,/^)/p' "$kdir/test/e2e/e2e_test.go" | grep -o '"k8s.io/kubernetes/[^"]*"' | sort -u | sed 's/^/\t_ /'
    echo ")"
  } >"$mod/tools.go"
  (cd "$mod" && go mod tidy >&2) || die "go mod tidy failed in $mod"
  local got
  got=$(cd "$mod" && go list -m github.com/onsi/ginkgo/v2)
  [[ "$got" == "github.com/onsi/ginkgo/v2 $ginkgo_version" ]] || die "ginkgo resolved to '$got', expected $ginkgo_version"
  touch "$mod/.tidy-done"
}

version_ldflags() {
  local f="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION"
  f+=" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37"
  f+=" -X k8s.io/component-base/version.gitTreeState=clean"
  f+=" -X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION"
  f+=" -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=37"
  echo "$f"
}

# Builds run at a lower priority: the machine is shared.
build_e2e_test() {
  (cd "$CONF_MOD" && nice -n 10 go test -c -trimpath -ldflags "$(version_ldflags)" -o "$E2E_TEST.tmp" k8s.io/kubernetes/test/e2e) \
    && mv "$E2E_TEST.tmp" "$E2E_TEST"
}

build_ginkgo() {
  (cd "$CONF_MOD" && nice -n 10 go build -trimpath -ldflags "-s -w" -o "$GINKGO.tmp" github.com/onsi/ginkgo/v2/ginkgo) \
    && mv "$GINKGO.tmp" "$GINKGO"
}

build_agnhost() {
  local ver
  ver=$(cat "$(cd "$CONF_MOD" && go list -m -f '{{.Dir}}' k8s.io/kubernetes)/test/images/agnhost/VERSION")
  (cd "$CONF_MOD" && nice -n 10 go build -trimpath -ldflags "-s -w -X main.Version=$ver" -o "$AGNHOST.tmp" k8s.io/kubernetes/test/images/agnhost) \
    && mv "$AGNHOST.tmp" "$AGNHOST"
}

# The nonewprivs image's /usr/local/bin/nnp (prints the effective uid).
build_nnp() {
  (cd "$CONF_MOD" && nice -n 10 go build -trimpath -ldflags "-s -w" -o "$NNP.tmp" k8s.io/kubernetes/test/images/nonewprivs) \
    && mv "$NNP.tmp" "$NNP"
}

# needs_build BIN SOURCE...: true when BIN is missing or a file under SOURCE is newer.
needs_build() {
  local bin=$1; shift
  [[ -x "$bin" ]] || return 0
  [[ -n "$(find "$@" -type f -newer "$bin" -print -quit)" ]]
}

# apt_download PACKAGE DIR: downloads PACKAGE's .deb with apt (not installed) and unpacks it in DIR.
apt_download() {
  local pkg=$1 dir=$2 tmp
  tmp=$(mktemp -d)
  if ! (cd "$tmp" && apt-get download "$pkg" >/dev/null 2>&1); then
    (DEBIAN_FRONTEND=noninteractive apt-get update -qq && cd "$tmp" && apt-get download "$pkg" >/dev/null) \
      || { rm -rf "$tmp"; die "apt-get download $pkg failed"; }
  fi
  mkdir -p "$dir"
  dpkg-deb -x "$tmp"/"$pkg"_*.deb "$dir" || { rm -rf "$tmp"; die "unpacking $pkg failed"; }
  rm -rf "$tmp"
}

# fetch_host_tools: Debian's bash-static (the agnhost stand-in's bash) and netcat-openbsd (its
# nc), downloaded with apt, not installed. curl and ss come from the host
# (packages curl and iproute2), copied with their shared libraries.
fetch_host_tools() {
  local tmp
  if [[ ! -x "$BASH_STATIC" ]]; then
    log "downloading Debian's bash-static (apt-get download, not installed)"
    tmp=$(mktemp -d); apt_download bash-static "$tmp"
    mkdir -p "$(dirname "$BASH_STATIC")"
    install -m 0755 "$tmp/bin/bash-static" "$BASH_STATIC"; rm -rf "$tmp"
  fi
  if [[ ! -x "$NC_OPENBSD" ]]; then
    log "downloading Debian's netcat-openbsd (apt-get download, not installed)"
    tmp=$(mktemp -d); apt_download netcat-openbsd "$tmp"
    mkdir -p "$(dirname "$NC_OPENBSD")"
    install -m 0755 "$tmp/bin/nc.openbsd" "$NC_OPENBSD"; rm -rf "$tmp"
  fi
  local missing=()
  command -v curl >/dev/null || missing+=(curl)
  command -v ss >/dev/null || missing+=(iproute2)
  command -v jq >/dev/null || missing+=(jq)
  if (( ${#missing[@]} )); then
    log "installing ${missing[*]} with apt-get"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
  fi
  # libbsd etc. of nc.openbsd must resolve on this host (they are copied into the image).
  ldd "$NC_OPENBSD" | grep -q 'not found' && die "$NC_OPENBSD: missing shared libraries: $(ldd "$NC_OPENBSD" | grep 'not found')"
  return 0
}

# build_busybox: Debian's busybox (the source package of the installed busybox-static) rebuilt
# with its static configuration changed so that ash behaves like the shell of the real images:
# FEATURE_DI_ENV_HACK (a Debian option: keep environment variables whose names are not shell
# identifiers, like the envFrom key "data-1") on, FEATURE_SH_STANDALONE and FEATURE_PREFER_APPLETS
# off (look commands up on PATH instead of running the applet of that name). The source comes
# from the Debian archive through apt with a private deb-src list (nothing under /etc changes).
build_busybox() {
  [[ -x "$CONF_BUSYBOX" ]] && return 0
  local missing=() tool pkg
  for tool in gcc:gcc make:make dpkg-source:dpkg-dev bzip2:bzip2 xz:xz-utils; do
    command -v "${tool%%:*}" >/dev/null || missing+=("${tool#*:}")
  done
  dpkg -s libc6-dev >/dev/null 2>&1 || missing+=(libc6-dev)
  if (( ${#missing[@]} )); then
    log "installing ${missing[*]} with apt-get (to rebuild busybox)"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
  fi
  local work="$CACHE_DIR/src/busybox-conformance" ver
  rm -rf "$work"; mkdir -p "$work/apt/lists/partial" "$work/apt/cache/archives/partial" "$work/src"
  local suites
  suites=$(sed -n 's/^VERSION_CODENAME=//p' /etc/os-release); suites=${suites:-bookworm}
  printf 'deb-src http://deb.debian.org/debian %s main
deb-src http://deb.debian.org/debian %s-updates main
deb-src http://deb.debian.org/debian-security %s-security main
' \
    "$suites" "$suites" "$suites" >"$work/apt/sources.list"
  local apt_opts=(-o "Dir::Etc::SourceList=$work/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
                  -o "Dir::State::Lists=$work/apt/lists" -o "Dir::Cache=$work/apt/cache")
  apt-get "${apt_opts[@]}" update -qq >&2 || die "apt-get update (deb-src lists) failed"
  ver=$(dpkg-query -W -f '${source:Version}' busybox-static 2>/dev/null || true)
  pkg=busybox${ver:+=$ver}
  (cd "$work/src" && apt-get "${apt_opts[@]}" source --download-only "$pkg" >/dev/null 2>&1) \
    || (cd "$work/src" && apt-get "${apt_opts[@]}" source --download-only busybox >/dev/null) \
    || die "apt-get source busybox failed"
  # (apt checked the files against the archive's signed Sources index; dpkg-source warns that
  # it cannot check the .dsc signature itself without debian-keyring)
  (cd "$work/src" && dpkg-source -x ./*.dsc bb >/dev/null 2>&1) || die "unpacking the busybox source failed"
  sed -e 's/^CONFIG_FEATURE_PREFER_APPLETS=y/# CONFIG_FEATURE_PREFER_APPLETS is not set/' \
      -e 's/^CONFIG_FEATURE_SH_STANDALONE=y/# CONFIG_FEATURE_SH_STANDALONE is not set/' \
      -e 's/^# CONFIG_FEATURE_DI_ENV_HACK is not set/CONFIG_FEATURE_DI_ENV_HACK=y/' \
      "$work/src/bb/debian/config/pkg/static" >"$work/src/bb/.config"
  # (yes ends with SIGPIPE: the configuration is checked instead of the pipeline's status)
  (cd "$work/src/bb" && { yes "" | make silentoldconfig >/dev/null 2>&1 || true; } \
     && grep -qx 'CONFIG_FEATURE_DI_ENV_HACK=y' .config && grep -qx 'CONFIG_STATIC=y' .config \
     && nice -n 10 make -j"$(nproc)" busybox >"$work/build.log" 2>&1) \
    || die "building busybox failed (see $work/build.log)"
  mkdir -p "$(dirname "$CONF_BUSYBOX")"
  install -m 0755 "$work/src/bb/busybox" "$CONF_BUSYBOX"
  env -i 'data-1=ok' PATH=/bin "$CONF_BUSYBOX" sh -c env | grep -qx 'data-1=ok' \
    || die "the rebuilt busybox's ash still drops data-1"
  rm -rf "$work"
}

# build_helpers: the conformance tool (image stand-ins, JUnit tallies) and the pause stand-in.
# hack/conformance is a Go module of its own (go-containerregistry), outside the project's go.mod.
build_helpers() {
  # The tool also builds hack/tools/oci (a replace directive in hack/conformance/go.mod).
  if needs_build "$CONF_TOOL" "$CONF_DIR/tool" "$CONF_DIR/go.mod" "$HACK_DIR/tools/oci" || needs_build "$PAUSE_BIN" "$CONF_DIR/pause"; then
    log "building the conformance tool and the pause stand-in into $TOOLS_DIR"
    mkdir -p "$TOOLS_DIR"
    # shellcheck disable=SC2030
    (cd "$CONF_DIR" && export CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-mod=mod \
      && go build -buildvcs=false -trimpath -ldflags '-s -w' -o "$CONF_TOOL.tmp" ./tool \
      && go build -buildvcs=false -trimpath -ldflags '-s -w' -o "$PAUSE_BIN.tmp" ./pause) \
      || { rm -f "$CONF_TOOL.tmp" "$PAUSE_BIN.tmp"; die "building hack/conformance failed"; }
    mv -f "$CONF_TOOL.tmp" "$CONF_TOOL"
    mv -f "$PAUSE_BIN.tmp" "$PAUSE_BIN"
  fi
}

cmd_build() {
  command -v go >/dev/null || die "go is not on PATH"
  mkdir -p "$BIN_DIR"
  local missing=() b
  for b in e2e.test ginkgo agnhost nonewprivs; do [[ -x "$BIN_DIR/$b" ]] || missing+=("$b"); done
  if (( ${#missing[@]} )); then
    log "building ${missing[*]} $K8S_VERSION into $BIN_DIR (e2e.test: several minutes on 2 cores)"
    (
      # shellcheck disable=SC2031
      export CGO_ENABLED=0 GOFLAGS=-mod=mod GOTOOLCHAIN=local
      run_with_progress "resolving the modules of k8s.io/kubernetes/test/e2e" conformance_module
      for b in "${missing[@]}"; do
        case "$b" in
          e2e.test) run_with_progress "building e2e.test $K8S_VERSION" build_e2e_test ;;
          ginkgo) run_with_progress "building ginkgo" build_ginkgo ;;
          agnhost) run_with_progress "building agnhost" build_agnhost ;;
          nonewprivs) run_with_progress "building the nonewprivs test binary" build_nnp ;;
        esac
      done
    )
  else
    log "e2e.test, ginkgo, agnhost and nonewprivs cached in $BIN_DIR"
  fi
  fetch_host_tools
  if [[ ! -x "$CONF_BUSYBOX" ]]; then run_with_progress "rebuilding Debian's busybox for the stand-ins" build_busybox; fi
  build_helpers
}

# ---------------------------------------------------------------------------------------------
# images

kubernetes_dir() { (cd "$CONF_MOD" && GOFLAGS=-mod=mod go list -m -f '{{.Dir}}' k8s.io/kubernetes); }

# write_redirects: hosts.toml in the certs.d of every containerd instance, redirecting
# registry.k8s.io, docker.io and gcr.io to the local registry. containerd reads them at each
# pull, so a running instance needs no restart (hack/containerd.sh writes them at start too).
write_redirects() {
  local inst reg dir
  for inst in "${CONTAINERD_INSTANCES[@]}"; do
    containerd_instance "$inst"
    [[ -d "$CTRD_DIR/certs.d" ]] || continue
    for reg in "${REDIRECTED_REGISTRIES[@]}"; do
      dir="$CTRD_DIR/certs.d/$reg"
      mkdir -p "$dir"
      printf '%s\n' \
        "# $reg is served by the local registry (offline stand-ins of the test images)." \
        "server = \"http://$REGISTRY\"" "" \
        "[host.\"http://$REGISTRY\"]" "  capabilities = [\"pull\", \"resolve\"]" >"$dir/hosts.toml.tmp"
      mv -f "$dir/hosts.toml.tmp" "$dir/hosts.toml"
    done
  done
}

# evict_stale_images DIGESTS_FILE: containerd keeps an image by tag; when a stand-in changed,
# remove the old one from every running instance so the next pull gets the new one.
evict_stale_images() {
  local digests=$1 inst ref digest name json
  [[ -x "$CRICTL" ]] || return 0
  for inst in "${CONTAINERD_INSTANCES[@]}"; do
    containerd_instance "$inst"
    [[ -S "$CTRD_SOCK" ]] || continue
    while read -r ref digest; do
      for name in "$REGISTRY/$ref" "registry.k8s.io/$ref"; do
        json=$("$CRICTL" --runtime-endpoint "$CTRD_ENDPOINT" --image-endpoint "$CTRD_ENDPOINT" --timeout 10s \
                 inspecti -o json "$name" 2>/dev/null) || continue
        [[ -n "$json" ]] || continue
        if ! jq -e --arg d "$digest" '[.status.repoDigests[]? | endswith("@" + $d)] | any' <<<"$json" >/dev/null; then
          log "containerd ($inst): $name is an older stand-in: removing it"
          "$CRICTL" --runtime-endpoint "$CTRD_ENDPOINT" --image-endpoint "$CTRD_ENDPOINT" --timeout 30s \
            rmi "$name" >/dev/null 2>&1 || log "  (crictl rmi $name failed)"
        fi
      done
    done <"$digests"
  done
}

cmd_images() {
  # The registry may belong to another stack dir (a run on hack/conformance-plane.sh): ask it.
  "$HACK_DIR/registry.sh" status >/dev/null 2>&1 || curl -fsS -o /dev/null "http://127.0.0.1:$REGISTRY_PORT/v2/" \
    || die "the local registry is not running (hack/stack-up.sh or hack/registry.sh start)"
  local kdir
  kdir=$(kubernetes_dir) || die "k8s.io/kubernetes $K8S_VERSION is not in the module cache: run $0 build"
  mkdir -p "$CACHE_DIR/conformance"
  local digests="$CACHE_DIR/conformance/digests.txt"
  log "building the stand-in test images and pushing them to $REGISTRY"
  "$CONF_TOOL" images --registry "$REGISTRY" \
    --busybox "$CONF_BUSYBOX" --bash "$BASH_STATIC" \
    --agnhost "$AGNHOST" --nnp "$NNP" --pause "$PAUSE_BIN" \
    --kitten-html "$kdir/test/images/kitten/html" --nautilus-html "$kdir/test/images/nautilus/html" \
    --porter-dir "$kdir/test/images/agnhost/porter" \
    --host-bin "/usr/bin/curl=$(command -v curl)" --host-bin "/usr/bin/ss=$(command -v ss)" \
    --host-bin "/usr/bin/nc=$NC_OPENBSD" >"$digests.tmp" || die "building/pushing the stand-in images failed"
  mv -f "$digests.tmp" "$digests"
  log "$(wc -l <"$digests") stand-in images in $REGISTRY"
  write_redirects
  evict_stale_images "$digests"
}

# ---------------------------------------------------------------------------------------------
# run

kc() { "$KUBECTL" --kubeconfig "$ADMIN_KUBECONFIG" "$@"; }

# The nodes a run cordoned, so that they are uncordoned after it, even after a SIGKILL ("uncordon").
CORDON_STATE="$STACK_DIR/conformance-cordoned"

# cordon_one NODE: cordons NODE and records it in $CORDON_STATE.
cordon_one() {
  local n=$1
  grep -qxF "$n" "$CORDON_STATE" 2>/dev/null || echo "$n" >>"$CORDON_STATE"
  if kc cordon "$n" >/dev/null 2>&1; then log "cordoned $n for the run"; else log "could not cordon $n"; fi
}

# cordon_others NODE: cordons every schedulable node but NODE. Nodes cordoned before the run are
# left as they are (and stay cordoned after it).
cordon_others() {
  local node=$1 n unsched
  while read -r n unsched; do
    [[ -n "$n" && "$n" != "$node" && "$unsched" != true ]] || continue
    cordon_one "$n"
  done < <(kc get nodes -o jsonpath='{range .items[*]}{.metadata.name} {.spec.unschedulable}{"\n"}{end}')
}

# watch_nodes NODE: for the whole run, cordons at once every node but NODE that is or becomes
# schedulable: nodes registering during the run, re-registered ones (a new Node object is not
# cordoned) and ones their owner uncordons.
watch_nodes() {
  local node=$1 n unsched
  trap - EXIT INT TERM HUP
  while true; do
    # --watch lists every node first, then streams changes; re-listed when the watch ends.
    kc get nodes --watch -o jsonpath='{.metadata.name} {.spec.unschedulable}{"\n"}' 2>/dev/null \
      | while read -r n unsched; do
          [[ -n "$n" && "$n" != "$node" && "$unsched" != true ]] || continue
          cordon_one "$n"
        done
    sleep 2
  done
}

uncordon_recorded() {
  [[ -f "$CORDON_STATE" ]] || return 0
  local n
  while read -r n; do
    [[ -n "$n" ]] || continue
    kc get node "$n" >/dev/null 2>&1 || continue
    if kc uncordon "$n" >/dev/null; then log "uncordoned $n"; else log "could not uncordon $n"; fi
  done <"$CORDON_STATE"
  rm -f "$CORDON_STATE"
}

check_node() {
  local node=$1 ready taints
  kc get node "$node" >/dev/null 2>&1 || die "no node $node (kubectl get nodes)"
  ready=$(kc get node "$node" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')
  [[ "$ready" == True ]] || die "node $node is not Ready"
  # The suite's pods tolerate no NoSchedule/NoExecute taint (the cordon taint
  # node.kubernetes.io/unschedulable is handled apart: the node is uncordoned for the run).
  taints=$(kc get node "$node" -o jsonpath='{range .spec.taints[*]}{.key}={.value}:{.effect}{"\n"}{end}' \
             | grep -E ':(NoSchedule|NoExecute)$' | grep -v '^node.kubernetes.io/unschedulable=' || true)
  [[ -z "$taints" ]] || die "node $node has taints the tests do not tolerate: $(tr '\n' ' ' <<<"$taints")"
}

CORDON_WATCH_PID=
TARGET_NODE=
TARGET_WAS_CORDONED=

run_cleanup() {
  local rc=$?
  trap - EXIT INT TERM HUP
  if [[ -n "$GINKGO_PID" ]] && kill -0 "$GINKGO_PID" 2>/dev/null; then
    log "stopping the e2e suite (pid $GINKGO_PID)"
    kill -KILL -- "-$GINKGO_PID" 2>/dev/null || true
  fi
  if [[ -n "$CORDON_WATCH_PID" ]]; then
    kill -TERM -- "-$CORDON_WATCH_PID" 2>/dev/null || true
    wait "$CORDON_WATCH_PID" 2>/dev/null || true
  fi
  if [[ -n "$TARGET_WAS_CORDONED" ]]; then kc cordon "$TARGET_NODE" >/dev/null 2>&1 || true; fi
  uncordon_recorded
  exit "$rc"
}

# duration_seconds DURATION: 90m, 1h30m, 45s -> seconds.
duration_seconds() {
  local d=$1 total=0
  [[ "$d" =~ ^([0-9]+[hms])+$ ]] || die "CONFORMANCE_TIMEOUT=$d: want a duration like 90m or 1h30m"
  while [[ "$d" =~ ^([0-9]+)([hms])(.*)$ ]]; do
    case "${BASH_REMATCH[2]}" in
      h) total=$((total + BASH_REMATCH[1] * 3600)) ;;
      m) total=$((total + BASH_REMATCH[1] * 60)) ;;
      s) total=$((total + BASH_REMATCH[1])) ;;
    esac
    d=${BASH_REMATCH[3]}
  done
  echo "$total"
}

cmd_run() {
  local node=${1:?usage: $0 run NODE}
  [[ -f "$STACK_DIR/env" ]] || die "no $STACK_DIR/env: the stack is not up (hack/stack-up.sh)"
  [[ -f "$ADMIN_KUBECONFIG" ]] || die "no $ADMIN_KUBECONFIG"
  local secs
  secs=$(duration_seconds "$CONFORMANCE_TIMEOUT")
  # One run at a time: two runs would cordon each other's node.
  exec 9>"$STACK_DIR/conformance.lock"
  flock -n 9 || die "another conformance run holds $STACK_DIR/conformance.lock"
  # Left over by a run that was killed: undo its cordons first.
  uncordon_recorded

  cmd_build
  cmd_images
  check_node "$node"

  local out="$CONFORMANCE_OUT/$node"
  mkdir -p "$out"
  # _output/ is build output: keep it out of git without touching the project's .gitignore.
  [[ "$CONFORMANCE_OUT" != "$REPO_DIR/_output/conformance" || -f "$REPO_DIR/_output/.gitignore" ]] \
    || echo '*' >"$REPO_DIR/_output/.gitignore"
  if [[ -n "$(ls -A "$out")" ]]; then
    rm -rf "$out.previous"
    mv "$out" "$out.previous"
    mkdir -p "$out"
    log "results of the previous run on $node moved to $out.previous"
  fi
  sed "s#@REGISTRY@#$REGISTRY#g" "$CONF_DIR/repo-list.yaml.in" >"$out/repo-list.yaml"
  printf 'node=%q\nfocus=%q\nskip=%q\ntimeout=%q\nprocs=%q\nstarted=%q\n' "$node" "$CONFORMANCE_FOCUS" \
    "$CONFORMANCE_SKIP" "$CONFORMANCE_TIMEOUT" "$CONFORMANCE_NODES" "$(date -Is)" >"$out/run.env"

  TARGET_NODE=$node
  trap run_cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  trap 'exit 129' HUP
  if [[ "$(kc get node "$node" -o jsonpath='{.spec.unschedulable}')" == true ]]; then
    TARGET_WAS_CORDONED=1
    kc uncordon "$node" >/dev/null
    log "uncordoned $node for the run (cordoned again afterwards)"
  fi
  cordon_others "$node"
  # The watcher runs in a process group of its own (job control on while it starts), so that
  # it ends with its kubectl.
  set -m
  watch_nodes "$node" </dev/null &
  CORDON_WATCH_PID=$!
  set +m

  log "running the e2e suite against $node: $CONFORMANCE_NODES processes, timeout $CONFORMANCE_TIMEOUT"
  log "  focus: $CONFORMANCE_FOCUS"
  log "  skip:  $CONFORMANCE_SKIP"
  log "  log:   $out/e2e.log"
  local rc=0 start=$SECONDS
  # ginkgo runs in a session of its own; a signal to this script interrupts it the way Ctrl-C
  # would (the specs run their cleanup, ginkgo writes the report), then the summary is written.
  # ginkgo interrupts the suite itself at --timeout; 10 minutes later it is interrupted from here,
  # and killed 5 minutes after that.
  KUBE_TEST_REPO_LIST="$out/repo-list.yaml" PATH="$BIN_DIR:$PATH" \
    setsid "$GINKGO" --nodes="$CONFORMANCE_NODES" --timeout="${secs}s" \
      --focus="$CONFORMANCE_FOCUS" --skip="$CONFORMANCE_SKIP" --no-color \
      "$E2E_TEST" -- \
      --provider=skeleton --kubeconfig="$ADMIN_KUBECONFIG" --kubectl-path="$KUBECTL" \
      --report-dir="$out" \
    </dev/null >"$out/e2e.log" 2>&1 &
  GINKGO_PID=$!
  trap 'interrupt_suite 130' INT
  trap 'interrupt_suite 143' TERM
  trap 'interrupt_suite 129' HUP
  while kill -0 "$GINKGO_PID" 2>/dev/null; do
    if [[ -z "$INTERRUPTED_AT" ]] && (( SECONDS - start > secs + 600 )); then
      log "the suite is still running 10 minutes after its timeout: interrupting it"
      interrupt_suite 124
    fi
    if [[ -n "$INTERRUPTED_AT" ]] && (( SECONDS - INTERRUPTED_AT > 300 )); then
      log "the suite did not stop within 5 minutes of the interrupt: killing it"
      kill -KILL -- "-$GINKGO_PID" 2>/dev/null || true
    fi
    sleep 2 & wait $! || true
  done
  wait "$GINKGO_PID" || rc=$?
  GINKGO_PID=
  trap 'exit 130' INT
  trap 'exit 143' TERM
  trap 'exit 129' HUP
  [[ -z "$INTERRUPT_RC" ]] || rc=$INTERRUPT_RC
  local dur=$((SECONDS - start))
  log "e2e suite exited with $rc after $((dur / 60))m$((dur % 60))s"
  printf 'exit_code=%q\nduration_seconds=%q\n' "$rc" "$dur" >>"$out/run.env"
  cmd_summary "$node" || log "no summary: see $out/e2e.log"
  return "$rc"
}

GINKGO_PID=
INTERRUPTED_AT=
INTERRUPT_RC=

# interrupt_suite RC: SIGINT to ginkgo and its test processes (once); the run ends with RC.
interrupt_suite() {
  [[ -z "$INTERRUPT_RC" ]] && INTERRUPT_RC=$1
  [[ -n "$GINKGO_PID" && -z "$INTERRUPTED_AT" ]] || return 0
  INTERRUPTED_AT=$SECONDS
  log "interrupting the e2e suite (its specs clean up, then it writes its report)"
  kill -INT -- "-$GINKGO_PID" 2>/dev/null || true
}

# run_setting NODE KEY: a setting recorded in _output/conformance/NODE/run.env.
run_setting() {
  local f="$CONFORMANCE_OUT/$1/run.env"
  [[ -f "$f" ]] || return 0
  # shellcheck disable=SC1090
  (source "$f"; printf '%s' "${!2:-}")
}

junit_of() {
  local f="$CONFORMANCE_OUT/$1/junit_01.xml"
  [[ -f "$f" ]] || die "no JUnit report $f (run: make conformance NODE=$1)"
  echo "$f"
}

cmd_summary() {
  local node=${1:?usage: $0 summary NODE} junit out rc dur
  junit=$(junit_of "$node")
  build_helpers
  out="$CONFORMANCE_OUT/$node/summary.txt"
  "$CONF_TOOL" summary --junit "$junit" --node "$node" \
    --focus "$(run_setting "$node" focus)" --skip "$(run_setting "$node" skip)" >"$out.tmp" \
    || { rm -f "$out.tmp"; return 1; }
  rc=$(run_setting "$node" exit_code) dur=$(run_setting "$node" duration_seconds)
  {
    cat "$out.tmp"
    [[ -z "$rc" ]] || echo "e2e exit code: $rc"
    [[ -z "$dur" ]] || echo "wall time: $((dur / 60))m$((dur % 60))s ($(run_setting "$node" procs) processes, timeout $(run_setting "$node" timeout))"
  } >"$out"
  rm -f "$out.tmp"
  log "summary in $out:"
  sed -n '/^selected:/,/^suite duration:/p' "$out" >&2
}

cmd_compare() {
  local vk=${1:?usage: $0 compare VK REF} ref=${2:?usage: $0 compare VK REF}
  build_helpers
  "$CONF_TOOL" compare --vk "$(junit_of "$vk")" --ref "$(junit_of "$ref")" --vk-name "$vk" --ref-name "$ref" \
    --vk-focus "$(run_setting "$vk" focus)" --vk-skip "$(run_setting "$vk" skip)" \
    --ref-focus "$(run_setting "$ref" focus)" --ref-skip "$(run_setting "$ref" skip)"
}

case "${1:-}" in
  build) cmd_build ;;
  images) cmd_build; cmd_images ;;
  run) shift; cmd_run "$@" ;;
  summary) shift; cmd_summary "$@" ;;
  compare) shift; cmd_compare "$@" ;;
  uncordon) uncordon_recorded ;;
  *) echo "usage: $0 build|images|run NODE|summary NODE|compare VK REF|uncordon" >&2; exit 2 ;;
esac
