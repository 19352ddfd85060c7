#!/usr/bin/env bash
# make bench-stats: what measuring costs vk-cri. Runs a vk-cri node with 50 pods twice, with the
# embedded cAdvisor and eviction manager (--enable-stats, the default) and without, and prints
# the agent's CPU and RSS over a window in each mode. With stats on, /metrics/resource is scraped
# every 15 s during the window, as metrics-server does.
# Environment: BENCH_STATS_PODS (50), BENCH_STATS_WINDOW (60 s), BENCH_STATS_NODE (vk-stats-bench),
# BENCH_STATS_PORT (10278).
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"

PODS=${BENCH_STATS_PODS:-50}
WINDOW=${BENCH_STATS_WINDOW:-60}
NODE=${BENCH_STATS_NODE:-vk-stats-bench}
PORT=${BENCH_STATS_PORT:-10278}
ENV_FILE="$STACK_DIR/env"
[[ -f "$ENV_FILE" ]] || die "no $ENV_FILE: run hack/stack-up.sh first"
set -a; source "$ENV_FILE"; set +a
kc=("$KUBECTL" --kubeconfig "$KUBECONFIG")
NS=bench-stats-$$
CLK_TCK=$(getconf CLK_TCK)

cleanup() {
  "${kc[@]}" delete namespace "$NS" --wait=false >/dev/null 2>&1 || true
  "$HACK_DIR/node.sh" remove "$NODE" >/dev/null 2>&1 || true
}
trap cleanup EXIT

# cpu_ticks PID: user+system clock ticks of the process.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }

pods_yaml() {
  for i in $(seq 1 "$PODS"); do
    cat <<YAML
---
apiVersion: v1
kind: Pod
metadata: {name: p$i, namespace: $NS}
spec:
  nodeName: $NODE
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 1
  containers:
  - {name: c, image: $REGISTRY/vk-cri/vktest:latest, args: [pause]}
YAML
  done
}

# measure MODE EXTRA_ARGS: prints "MODE cpu% rss_mean_MiB rss_max_MiB".
measure() {
  local mode=$1 extra=$2
  "$HACK_DIR/node.sh" remove "$NODE" >/dev/null 2>&1 || true
  VKCRI_EXTRA_ARGS="$extra" "$HACK_DIR/node.sh" start "$NODE" "$PORT" >/dev/null
  TIMEOUT=90 "$HACK_DIR/node.sh" wait-ready "$NODE" >/dev/null
  local pid; pid=$(cat "$STACK_DIR/vk-cri-$NODE.pid")
  "${kc[@]}" create namespace "$NS" >/dev/null
  wait_for "default service account" 30 "${kc[@]}" -n "$NS" get serviceaccount default
  pods_yaml | "${kc[@]}" apply -f - >/dev/null
  "${kc[@]}" -n "$NS" wait --for=condition=Ready pod --all --timeout=300s >/dev/null
  log "$mode: $PODS pods Ready; measuring ${WINDOW}s"
  local t0 c0 c1 n=0 sum=0 max=0 r end=$((SECONDS + WINDOW)) next=$SECONDS
  t0=$(date +%s.%N); c0=$(cpu_ticks "$pid")
  while (( SECONDS < end )); do
    if [[ $mode == on ]] && (( SECONDS >= next )); then
      "${kc[@]}" get --raw "/api/v1/nodes/$NODE/proxy/metrics/resource" >/dev/null 2>&1 &
      next=$((SECONDS + 15))
    fi
    r=$(rss_kib "$pid"); n=$((n + 1)); sum=$((sum + r)); (( r > max )) && max=$r
    sleep 1
  done
  wait
  c1=$(cpu_ticks "$pid")
  awk -v m="$mode" -v c0="$c0" -v c1="$c1" -v hz="$CLK_TCK" -v t0="$t0" -v t1="$(date +%s.%N)" -v sum="$sum" -v n="$n" -v max="$max" \
    'BEGIN { printf "%-4s %8.2f %14.1f %13.1f\n", m, 100*(c1-c0)/hz/(t1-t0), sum/n/1024, max/1024 }'
  "${kc[@]}" delete namespace "$NS" --wait=true --timeout=180s >/dev/null 2>&1 || true
}

on=$(measure on "")
off=$(measure off "--enable-stats=false")
echo
echo "vk-cri with $PODS pods, ${WINDOW}s window (load average $(cut -d' ' -f1-3 /proc/loadavg))"
printf "%-5s %8s %14s %13s\n" stats "CPU %" "RSS mean MiB" "RSS max MiB"
echo "$on"
echo "$off"
