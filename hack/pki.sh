#!/usr/bin/env bash
# Creates the local stack's certificates and kubeconfigs with openssl in $STACK_DIR/pki.
# Existing files are kept (if the cluster CA is missing, everything is made anew).
#
#   hack/pki.sh [all]                 CAs, service-account keys, control plane certs, kubeconfigs
#   hack/pki.sh serving-cert NAME IP...
#                                     a kubelet-API serving cert for node NAME, signed by the
#                                     cluster CA, in $PKI_DIR/serving-NAME.{crt,key}
#   hack/pki.sh node-client-cert NAME
#                                     an upstream kubelet's client cert for node NAME
#                                     (CN=system:node:NAME, O=system:nodes: the Node authorizer's
#                                     identity) and $PKI_DIR/kubelet-NAME.kubeconfig
#   hack/pki.sh metrics-server IP
#                                     metrics-server's serving cert (metrics-server.kube-system.svc and
#                                     IP), its client cert (CN=system:metrics-server, used towards the
#                                     API server and the kubelets) and metrics-server.kubeconfig
#
# etcd listens on plain http on 127.0.0.1 only, so it has no certificates.
#
#   ca.{crt,key}                   cluster CA (client certs, apiserver/kubelet serving certs, CSR signer)
#   front-proxy-ca.{crt,key}       front-proxy (requestheader) CA
#   sa.{key,pub}                   service-account token signing key pair
#   apiserver.{crt,key}            kube-apiserver serving cert
#   apiserver-kubelet-client.*     the apiserver's client cert towards kubelets (CN kube-apiserver-kubelet-client)
#   front-proxy-client.*           the apiserver's client cert towards aggregated API servers
#   admin.*, admin.kubeconfig      O=system:masters: for the admin and the test harness only
#   controller-manager.*, scheduler.*  their client certs and kubeconfigs
#   vk-cri.*, vk-cri.kubeconfig    CN vk-cri, O vk-cri:nodes: bound to no role (vk-cri nodes get identities
#                                  of their own by TLS bootstrap); tests use it as a certificate of the
#                                  cluster CA that may do nothing
#   bootstrap-token                the nodes' bootstrap token (<id>.<secret>, kubeadm's format);
#                                  hack/control-plane.sh keeps its Secret in kube-system
#   bootstrap.kubeconfig           that token and the cluster CA: --bootstrap-kubeconfig of every node
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

DAYS=3650
umask 077

# new_key FILE: an RSA 2048 private key, if missing.
new_key() {
  [[ -f "$1" ]] || openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$1" 2>/dev/null
}

# new_ca NAME CN: a self-signed CA.
new_ca() {
  local name=$1 cn=$2
  [[ -f "$PKI_DIR/$name.crt" && -f "$PKI_DIR/$name.key" ]] && return 0
  log "pki: CA $name (CN=$cn)"
  new_key "$PKI_DIR/$name.key"
  openssl req -x509 -new -key "$PKI_DIR/$name.key" -subj "/CN=$cn" -days "$DAYS" -sha256 \
    -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,digitalSignature,keyEncipherment,keyCertSign" \
    -addext "subjectKeyIdentifier=hash" \
    -out "$PKI_DIR/$name.crt" 2>/dev/null
}

# new_cert CA NAME SUBJECT USAGE [SAN]: a leaf cert NAME.{crt,key} signed by CA.{crt,key}.
# USAGE is client, server or both; SAN an openssl subjectAltName value.
new_cert() {
  local ca=$1 name=$2 subj=$3 usage=$4 san=${5:-}
  [[ -f "$PKI_DIR/$name.crt" && -f "$PKI_DIR/$name.key" ]] && return 0
  log "pki: $name ($subj${san:+, $san})"
  local eku ext
  case "$usage" in
    client) eku=clientAuth ;;
    server) eku=serverAuth ;;
    both) eku=serverAuth,clientAuth ;;
  esac
  ext=$(mktemp)
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$eku"
    echo "authorityKeyIdentifier=keyid"
    [[ -n "$san" ]] && echo "subjectAltName=$san"
  } >"$ext"
  new_key "$PKI_DIR/$name.key"
  openssl req -new -key "$PKI_DIR/$name.key" -subj "$subj" -out "$PKI_DIR/$name.csr" 2>/dev/null
  openssl x509 -req -in "$PKI_DIR/$name.csr" -CA "$PKI_DIR/$ca.crt" -CAkey "$PKI_DIR/$ca.key" \
    -set_serial "0x$(openssl rand -hex 16)" -days "$DAYS" -sha256 -extfile "$ext" \
    -out "$PKI_DIR/$name.crt.tmp" 2>/dev/null
  mv "$PKI_DIR/$name.crt.tmp" "$PKI_DIR/$name.crt"
  rm -f "$PKI_DIR/$name.csr" "$ext"
}

# bootstrap_kubeconfig: a token in kubeadm's format ([a-z0-9]{6}.[a-z0-9]{16}), made once, and
# bootstrap.kubeconfig with it.
bootstrap_kubeconfig() {
  if [[ ! -s "$PKI_DIR/bootstrap-token" ]] || ! grep -Eqx '[a-z0-9]{6}\.[a-z0-9]{16}' "$PKI_DIR/bootstrap-token"; then
    log "pki: bootstrap token"
    local chars
    chars=$(LC_ALL=C tr -dc 'a-z0-9' </dev/urandom | head -c 22 || true)
    echo "${chars:0:6}.${chars:6:16}" >"$PKI_DIR/bootstrap-token"
  fi
  local tmp
  tmp=$(mktemp "$PKI_DIR/.kubeconfig.XXXXXX")
  cat >"$tmp" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: vk-cri
  cluster:
    server: https://127.0.0.1:$APISERVER_PORT
    certificate-authority-data: $(base64 -w0 "$PKI_DIR/ca.crt")
users:
- name: tls-bootstrap-token-user
  user:
    token: $(<"$PKI_DIR/bootstrap-token")
contexts:
- name: tls-bootstrap-token-user@vk-cri
  context:
    cluster: vk-cri
    user: tls-bootstrap-token-user
current-context: tls-bootstrap-token-user@vk-cri
EOF
  if cmp -s "$tmp" "$PKI_DIR/bootstrap.kubeconfig"; then rm -f "$tmp"; else mv "$tmp" "$PKI_DIR/bootstrap.kubeconfig"; fi
}

# kubeconfig NAME USER: $PKI_DIR/NAME.kubeconfig with NAME.{crt,key} embedded.
kubeconfig() {
  local name=$1 user=$2 tmp
  tmp=$(mktemp "$PKI_DIR/.kubeconfig.XXXXXX")
  cat >"$tmp" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: vk-cri
  cluster:
    server: https://127.0.0.1:$APISERVER_PORT
    certificate-authority-data: $(base64 -w0 "$PKI_DIR/ca.crt")
users:
- name: $user
  user:
    client-certificate-data: $(base64 -w0 "$PKI_DIR/$name.crt")
    client-key-data: $(base64 -w0 "$PKI_DIR/$name.key")
contexts:
- name: $user@vk-cri
  context:
    cluster: vk-cri
    user: $user
current-context: $user@vk-cri
EOF
  if cmp -s "$tmp" "$PKI_DIR/$name.kubeconfig"; then
    rm -f "$tmp"
  else
    mv "$tmp" "$PKI_DIR/$name.kubeconfig"
  fi
}

all() {
  mkdir -p "$PKI_DIR"
  if [[ ! -f "$PKI_DIR/ca.crt" || ! -f "$PKI_DIR/ca.key" ]]; then
    if compgen -G "$PKI_DIR/*" >/dev/null; then
      log "pki: no cluster CA: removing the old contents of $PKI_DIR"
      rm -rf "${PKI_DIR:?}"/*
    fi
  else
    log "pki: reusing $PKI_DIR (missing files are made)"
  fi
  new_ca ca vk-cri-ca
  new_ca front-proxy-ca vk-cri-front-proxy-ca
  if [[ ! -f "$PKI_DIR/sa.key" || ! -f "$PKI_DIR/sa.pub" ]]; then
    log "pki: service-account key pair"
    rm -f "$PKI_DIR/sa.key"
    new_key "$PKI_DIR/sa.key"
    openssl pkey -in "$PKI_DIR/sa.key" -pubout -out "$PKI_DIR/sa.pub" 2>/dev/null
  fi
  new_cert ca apiserver "/CN=kube-apiserver" server \
    "IP:127.0.0.1,IP:$SERVICE_IP,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  new_cert ca apiserver-kubelet-client "/O=kubeadm:cluster-admins/CN=kube-apiserver-kubelet-client" client
  new_cert front-proxy-ca front-proxy-client "/CN=front-proxy-client" client
  new_cert ca admin "/O=system:masters/CN=kubernetes-admin" client
  new_cert ca controller-manager "/CN=system:kube-controller-manager" client
  new_cert ca scheduler "/CN=system:kube-scheduler" client
  new_cert ca vk-cri "/O=vk-cri:nodes/CN=vk-cri" client
  kubeconfig admin kubernetes-admin
  kubeconfig controller-manager system:kube-controller-manager
  kubeconfig scheduler system:kube-scheduler
  kubeconfig vk-cri vk-cri
  bootstrap_kubeconfig
  chmod 644 "$PKI_DIR"/*.crt "$PKI_DIR/sa.pub"
  log "pki: ready in $PKI_DIR"
}

serving_cert() {
  local name=${1:-}; shift || true
  [[ -n "$name" && "$name" =~ ^[A-Za-z0-9.-]+$ ]] || die "usage: $0 serving-cert NAME IP..."
  [[ -f "$PKI_DIR/ca.crt" ]] || all
  local san="" ip host
  for ip in "$@"; do san+="IP:$ip,"; done
  [[ " $* " == *" 127.0.0.1 "* ]] || san+="IP:127.0.0.1,"
  host=$(hostname)
  san+="DNS:localhost,DNS:$name"
  [[ "$host" == "$name" || "$host" == localhost ]] || san+=",DNS:$host"
  local want
  want=$(tr ',' '\n' <<<"$san" | sed 's/^IP:/IP Address:/' | sort | tr '\n' ' ')
  if [[ -f "$PKI_DIR/serving-$name.crt" ]]; then
    local have
    have=$(openssl x509 -in "$PKI_DIR/serving-$name.crt" -noout -ext subjectAltName 2>/dev/null \
             | tail -n +2 | tr -d ' ' | tr ',' '\n' | sed 's/^IPAddress:/IP Address:/' | sort | tr '\n' ' ')
    if [[ "$have" != "$want" ]]; then
      log "pki: serving-$name has other SANs ($have): making it anew"
      rm -f "$PKI_DIR/serving-$name.crt" "$PKI_DIR/serving-$name.key"
    fi
  fi
  new_cert ca "serving-$name" "/CN=$name" server "$san"
  chmod 644 "$PKI_DIR/serving-$name.crt"
  echo "$PKI_DIR/serving-$name.crt"
}

# node_client_cert NAME: kubelet-NAME.{crt,key,kubeconfig} for an upstream kubelet registering as
# node NAME (used by hack/ref.sh); prints the kubeconfig's path.
node_client_cert() {
  local name=${1:-}
  [[ -n "$name" && "$name" =~ ^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$ ]] || die "usage: $0 node-client-cert NAME"
  [[ -f "$PKI_DIR/ca.crt" ]] || all
  new_cert ca "kubelet-$name" "/O=system:nodes/CN=system:node:$name" client
  kubeconfig "kubelet-$name" "system:node:$name"
  chmod 644 "$PKI_DIR/kubelet-$name.crt"
  echo "$PKI_DIR/kubelet-$name.kubeconfig"
}

# metrics_server_certs IP: metrics-server-serving.{crt,key} and metrics-server.{crt,key,kubeconfig}.
metrics_server_certs() {
  local ip=${1:?usage: $0 metrics-server IP}
  [[ -f "$PKI_DIR/ca.crt" ]] || all
  new_cert ca metrics-server-serving "/CN=metrics-server" server \
    "DNS:metrics-server.kube-system.svc,DNS:metrics-server.kube-system,IP:$ip"
  new_cert ca metrics-server "/CN=system:metrics-server" client
  kubeconfig metrics-server system:metrics-server
  chmod 644 "$PKI_DIR/metrics-server-serving.crt" "$PKI_DIR/metrics-server.crt"
}

case "${1:-all}" in
  all) all ;;
  serving-cert) shift; serving_cert "$@" ;;
  node-client-cert) shift; node_client_cert "$@" ;;
  metrics-server) shift; metrics_server_certs "$@" ;;
  *) die "usage: $0 [all] | serving-cert NAME IP..." ;;
esac
