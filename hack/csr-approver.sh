#!/usr/bin/env bash
# Approves the kubelet-serving certificate requests of one vk-cri node, as a cluster admin would
# for a kubelet with serverTLSBootstrap, for as long as that node's vk-cri process runs (its
# renewals included). Started by hack/node.sh; kube-controller-manager signs what it approves.
#
#   hack/csr-approver.sh NAME PID
#
# A request is approved only if it is pending, for signer kubernetes.io/kubelet-serving, made by
# that node's own identity (user system:node:NAME, obtained by TLS bootstrap), for subject
# CN=system:node:NAME, O=system:nodes, and its IP SANs are the node's address or loopback.
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"

name=${1:?usage: csr-approver.sh NAME PID}
pid=${2:?usage: csr-approver.sh NAME PID}
# VKCRI_STACK_ENV: the env the node was started with (hack/node.sh), e.g. a CRI-O instance's.
set -a; source "${VKCRI_STACK_ENV:-$STACK_DIR/env}"; set +a
kubectl_admin() { "$KUBECTL" --kubeconfig "$KUBECONFIG" "$@"; }

# acceptable CSR_NAME BASE64_REQUEST: the request's subject and SANs are this node's.
acceptable() {
  local req subject ips
  req=$(base64 -d <<<"$2") || return 1
  subject=$(openssl req -noout -subject -nameopt RFC2253 <<<"$req" 2>/dev/null) || return 1
  [[ "$subject" == "subject=CN=system:node:$name,O=system:nodes" || \
     "$subject" == "subject=O=system:nodes,CN=system:node:$name" ]] || return 1  # another node's
  ips=$(openssl req -noout -text <<<"$req" | grep -o 'IP Address:[0-9a-f.:]*' | sed 's/IP Address://' || true)
  for ip in $ips; do
    [[ "$ip" == "$NODE_IP" || "$ip" == 127.0.0.1 ]] || { log "csr $1: IP SAN $ip is not node $name's"; return 1; }
  done
}

# One line per CSR: name, signer, requestor, request, then its conditions (none while pending).
fmt='{.metadata.name} {.spec.signerName} {.spec.username} {.spec.request} {.status.conditions[*].type}{"\n"}'

# --watch lists every CSR, then follows changes from that list's version: none is missed.
while kill -0 "$pid" 2>/dev/null; do
  kubectl_admin get csr --watch -o jsonpath="$fmt" --request-timeout=0 2>/dev/null |
    while read -r csr signer user request conditions; do
      kill -0 "$pid" 2>/dev/null || exit 0
      [[ "$signer" == kubernetes.io/kubelet-serving && "$user" == "system:node:$name" && -z "$conditions" ]] || continue
      acceptable "$csr" "$request" || continue
      kubectl_admin certificate approve "$csr" >/dev/null && log "approved $csr for node $name"
    done || true
  sleep 1  # the watch ended (API server restarting?): list and watch again
done
