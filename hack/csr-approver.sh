#!/usr/bin/env bash
# Approves the kubelet-serving certificate requests of one vk-cri node, as a cluster admin would
# for a kubelet with serverTLSBootstrap, for as long as that node's vk-cri process runs (its
# renewals included). Started by hack/node.sh; kube-controller-manager signs what it approves.
#
#   hack/csr-approver.sh NAME PID
#
# A request is approved only if it is pending, for signer kubernetes.io/kubelet-serving, made by
# vk-cri's own identity (user vk-cri), for subject CN=system:node:NAME, O=system:nodes, and its IP
# SANs are the node's address or loopback.
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"

name=${1:?usage: csr-approver.sh NAME PID}
pid=${2:?usage: csr-approver.sh NAME PID}
set -a; source "$STACK_DIR/env"; set +a
kubectl_admin() { "$KUBECTL" --kubeconfig "$KUBECONFIG" "$@"; }

# acceptable CSR_NAME BASE64_REQUEST: the request's subject and SANs are this node's.
acceptable() {
  local req subject ips
  req=$(base64 -d <<<"$2") || return 1
  subject=$(openssl req -noout -subject -nameopt RFC2253 <<<"$req" 2>/dev/null) || return 1
  [[ "$subject" == "subject=CN=system:node:$name,O=system:nodes" || \
     "$subject" == "subject=O=system:nodes,CN=system:node:$name" ]] || { log "csr $1: subject $subject is not node $name's"; return 1; }
  ips=$(openssl req -noout -text <<<"$req" | grep -o 'IP Address:[0-9a-f.:]*' | sed 's/IP Address://' || true)
  for ip in $ips; do
    [[ "$ip" == "$NODE_IP" || "$ip" == 127.0.0.1 ]] || { log "csr $1: IP SAN $ip is not node $name's"; return 1; }
  done
}

fmt='{range .items[?(@.spec.signerName=="kubernetes.io/kubelet-serving")]}{.metadata.name} {.spec.username} {.status.conditions[*].type} {.spec.request}{"\n"}{end}'
approve_pending() {
  local csr user rest
  kubectl_admin get csr -o jsonpath="$fmt" | while read -r csr user rest; do
    [[ "$user" == vk-cri ]] || continue
    # Pending requests have no condition: the remaining field is the request itself.
    [[ "$rest" != *" "* ]] || continue
    acceptable "$csr" "$rest" || continue
    kubectl_admin certificate approve "$csr" >/dev/null && log "approved $csr for node $name"
  done
}

# Each change to a CSR (created, approved, issued) is one line of the watch; re-list then.
while kill -0 "$pid" 2>/dev/null; do
  approve_pending || true
  kubectl_admin get csr --watch-only -o name --request-timeout=0 2>/dev/null | while read -r _; do
    approve_pending || true
    kill -0 "$pid" 2>/dev/null || exit 0
  done || true
done
