#!/usr/bin/env bash
# Brings the whole local stack up (idempotent: what already runs is left alone):
#   containerd instance "vk" (installed if missing), the local OCI registry (hack/registry.sh,
#   if present), the PKI, the control plane (etcd, kube-apiserver, kube-controller-manager,
#   kube-scheduler) and the RBAC in hack/rbac; then writes $STACK_DIR/env, plain KEY=value lines
#   for Go tests (parse) and bash (set -a; source "$STACK_DIR/env"; set +a).
#   VKCRI_CONTAINERD=2 (default) or 1.6 picks the containerd lane (hack/containerd.sh); the env's
#   CONTAINERD_LANE says which lane the "vk" instance runs (the "ref" one follows the same variable).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

t0=$SECONDS
mkdir -p "$STACK_DIR" "$LOG_DIR"
log "bringing the local stack up in $STACK_DIR"

"$HACK_DIR/containerd.sh" install vk
"$HACK_DIR/containerd.sh" start vk

if [[ -x "$HACK_DIR/registry.sh" ]]; then
  phase "registry: tools and test images" "$HACK_DIR/registry.sh" start
else
  log "hack/registry.sh not present: no local registry at 127.0.0.1:$REGISTRY_PORT"
fi

"$HACK_DIR/pki.sh"
phase "control plane" "$HACK_DIR/control-plane.sh" start   # also applies hack/rbac/*.yaml

containerd_instance vk
vk_endpoint=$CTRD_ENDPOINT vk_gateway=$CTRD_GATEWAY vk_subnet=$CTRD_SUBNET vk_lane=$CTRD_LANE
containerd_instance ref
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
REF_CRI_ENDPOINT=$CTRD_ENDPOINT
REF_NODE_IP=$CTRD_GATEWAY
REF_POD_SUBNET=$CTRD_SUBNET
CONTAINERD_LANE=$vk_lane
ENV
chmod 644 "$tmp"
mv "$tmp" "$STACK_DIR/env"
log "wrote $STACK_DIR/env:"
sed 's/^/    /' "$STACK_DIR/env" >&2
log "local stack up in $((SECONDS - t0))s"
