#!/usr/bin/env bash
# make bench-kubelet-api: exec round-trip latency and port-forward throughput through the API
# server to a vk-cri node and to the reference kubelet node `ref`, next to the same operations
# made directly on each node's containerd (what crictl exec / crictl port-forward do).
#   - builds bin/vk-cri and bin/bench-kubeletapi; the stack and the ref node must be up;
#   - starts its own vk-cri node (BENCH_KAPI_NODE, default vk-bench-kapi, kubelet API port
#     BENCH_KAPI_PORT, default 10279) and removes it afterwards, even on failure;
#   - prints the table. BENCH_KAPI_ARGS are passed to bin/bench-kubeletapi (--execs, --blob-mib ...).
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"

NODE=${BENCH_KAPI_NODE:-vk-bench-kapi}
PORT=${BENCH_KAPI_PORT:-10279}
cd "$REPO_DIR"
make --no-print-directory build
go build -o bin/bench-kubeletapi ./hack/bench-kubeletapi
[[ -f "$STACK_DIR/env" ]] || die "the local stack is not up (hack/stack-up.sh)"
set -a; source "$STACK_DIR/env"; set +a
"$KUBECTL" get node ref >/dev/null 2>&1 || die "no reference node ref (hack/ref.sh up)"

trap '"$HACK_DIR/node.sh" remove "$NODE" >/dev/null 2>&1 || true' EXIT
"$HACK_DIR/node.sh" start "$NODE" "$PORT"
"$HACK_DIR/node.sh" wait-ready "$NODE"
bin/bench-kubeletapi --vk-node "$NODE" --ref-node ref ${BENCH_KAPI_ARGS:-}
