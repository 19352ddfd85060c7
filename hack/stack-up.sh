#!/usr/bin/env bash
# Brings the whole local stack up (idempotent: what already runs is left alone):
#   containerd instance "vk" (installed if missing), the local OCI registry (hack/registry.sh,
#   if present), the PKI, the control plane (etcd, kube-apiserver, kube-controller-manager,
#   kube-scheduler) and the RBAC in hack/rbac; then writes $STACK_DIR/env, plain KEY=value lines
#   for Go tests (parse) and bash (set -a; source "$STACK_DIR/env"; set +a).
#   VKCRI_CONTAINERD=2 (default) or 1.6 picks the containerd lane (hack/containerd.sh); the env's
#   CONTAINERD_LANE says which lane the "vk" instance runs (the "ref" one follows the same variable).
#   VKCRI_RUNTIME=containerd (default) or crio picks the runtime of both instances ("vk" for the
#   vk-cri nodes, "ref" for hack/ref.sh): hack/containerd.sh or hack/crio.sh. The env's
#   CONTAINER_RUNTIME says which; a stack already up keeps its runtime (asking for another one
#   explicitly is an error: hack/stack-down.sh first).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

t0=$SECONDS
mkdir -p "$STACK_DIR" "$LOG_DIR"
log "bringing the local stack up in $STACK_DIR"

# The runtime of a stack that is up stays; VKCRI_RUNTIME applies to a new one.
runtime=$VKCRI_RUNTIME
recorded=$(sed -n 's/^CONTAINER_RUNTIME=//p' "$STACK_DIR/env" 2>/dev/null || true)
if [[ -n "$recorded" && "$recorded" != "$runtime" ]] && "$(runtime_script "$recorded")" status vk >/dev/null 2>&1; then
  [[ -z "$VKCRI_RUNTIME_SET" ]] \
    || die "the stack runs on $recorded, VKCRI_RUNTIME=$VKCRI_RUNTIME asks for another: hack/stack-down.sh first"
  runtime=$recorded
fi
runtime_sh=$(runtime_script "$runtime")
"$runtime_sh" install vk
"$runtime_sh" start vk

if [[ -x "$HACK_DIR/registry.sh" ]]; then
  phase "registry: tools and test images" "$HACK_DIR/registry.sh" start
else
  log "hack/registry.sh not present: no local registry at 127.0.0.1:$REGISTRY_PORT"
fi

"$HACK_DIR/pki.sh"
phase "control plane" "$HACK_DIR/control-plane.sh" start   # also applies hack/rbac/*.yaml

containerd_instance vk
vk_lane=$CTRD_LANE
runtime_instance "$runtime" vk
vk_endpoint=$RT_ENDPOINT vk_gateway=$RT_GATEWAY vk_subnet=$RT_SUBNET
runtime_instance "$runtime" ref
tmp=$(mktemp "$STACK_DIR/.env.XXXXXX")
cat >"$tmp" <<ENV
KUBECONFIG=$PKI_DIR/admin.kubeconfig
VKCRI_KUBECONFIG=$PKI_DIR/vk-cri.kubeconfig
CRI_ENDPOINT=$vk_endpoint
KUBECTL=$KUBECTL
CRICTL=$CRICTL
REGISTRY=127.0.0.1:$REGISTRY_PORT
NODE_IP=$vk_gateway
CLIENT_CA=$PKI_DIR/ca.crt
PKI_DIR=$PKI_DIR
STACK_DIR=$STACK_DIR
BIN_DIR=$BIN_DIR
APISERVER_URL=https://127.0.0.1:$APISERVER_PORT
POD_SUBNET=$vk_subnet
REF_CRI_ENDPOINT=$RT_ENDPOINT
REF_NODE_IP=$RT_GATEWAY
REF_POD_SUBNET=$RT_SUBNET
CONTAINER_RUNTIME=$runtime
CONTAINERD_LANE=$vk_lane
ENV
chmod 644 "$tmp"
mv "$tmp" "$STACK_DIR/env"
log "wrote $STACK_DIR/env:"
sed 's/^/    /' "$STACK_DIR/env" >&2
log "local stack up in $((SECONDS - t0))s"
