#!/usr/bin/env bash
# A vk-cri node inside the VM lane's guest, with hack/node.sh's commands so that test/e2e can
# drive it (VKCRI_E2E_NODE_SH=hack/vm/node.sh):
#   hack/vm/node.sh seed NAME PORT        write $VM_STATE/seed (before hack/vm/vm.sh start): vk-cri's
#                                         binary, kubeconfig, certificates, containerd's config
#   hack/vm/node.sh start NAME PORT       start vk-cri in the guest (systemd unit vk-cri.service) with
#                                         the usual flags and $VKCRI_EXTRA_ARGS
#   hack/vm/node.sh stop|kill NAME        SIGTERM / SIGKILL the unit's vk-cri
#   hack/vm/node.sh status NAME           exit 0 iff it runs
#   hack/vm/node.sh wait-ready NAME       wait until the Node is Ready and its kubelet API serves
#   hack/vm/node.sh remove NAME           delete its pods and Node, stop it, clean the guest's runtime
#
# The node reports 127.0.0.1 and PORT: qemu forwards 127.0.0.1:PORT to the guest's PORT. The guest's
# log is copied to $STACK_DIR/logs/vk-cri-NAME.log on stop and remove.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

cmd=${1:?usage: node.sh seed|start|stop|kill|status|wait-ready|remove NAME [PORT]}
name=${2:?node name required}
port=${3:-$VM_KUBELET_PORT}
ENV_FILE="$STACK_DIR/env"
[[ -f "$ENV_FILE" ]] || die "no $ENV_FILE: the shared stack is not up"
set -a; source "$ENV_FILE"; set +a
VKCRI_BIN=${VKCRI_BIN:-$REPO_DIR/bin/vk-cri}
GUEST_CRI="unix://$VM_STATE/containerd.sock"
logfile="$STACK_DIR/logs/vk-cri-$name.log"
api_port=${APISERVER_URL##*:}
registry_port=${REGISTRY##*:}

fetch_log() { mkdir -p "$STACK_DIR/logs"; vm_ssh 'cat /var/log/vk-cri.log 2>/dev/null' >"$logfile" 2>/dev/null || true; }

node_ready() {
  [[ "$("$KUBECTL" --kubeconfig "$KUBECONFIG" get node "$name" \
        -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" == True ]]
}
kubelet_api_serving() {
  [[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 --cacert "$CLIENT_CA" "https://127.0.0.1:$port/healthz")" == 401 ]]
}

write_seed() {
  local seed="$VM_STATE/seed"
  rm -rf "$seed"; mkdir -p "$seed/bin" "$seed/etc/vk-cri" "$seed/etc/containerd/certs.d/127.0.0.1:$registry_port" "$seed/etc/cni/net.d"
  [[ -x "$VKCRI_BIN" ]] || die "$VKCRI_BIN not built: run make build"
  install -m 0755 "$VKCRI_BIN" "$seed/bin/vk-cri"
  # The node's credentials, with the API server as the guest reaches it (its certificate names
  # "kubernetes"; the guest's /etc/hosts maps that name to the host).
  "$KUBECTL" --kubeconfig "$VKCRI_KUBECONFIG" config view --flatten --minify -o yaml |
    sed "s#server: .*#server: https://kubernetes:$api_port#" >"$seed/etc/vk-cri/kubeconfig"
  [[ -f "$PKI_DIR/serving-$name.crt" ]] || "$HACK_DIR/pki.sh" serving-cert "$name" 127.0.0.1 >/dev/null
  cp "$PKI_DIR/serving-$name.crt" "$PKI_DIR/serving-$name.key" "$CLIENT_CA" "$seed/etc/vk-cri/"
  cp "$CLIENT_CA" "$seed/etc/vk-cri/client-ca.crt"
  # containerd 2.x, version 3 config, systemd cgroup driver; the host's registry through 10.0.2.2
  # under the name the pods use (127.0.0.1:PORT), plus the stand-ins' registries.
  cat >"$seed/etc/containerd/config.toml" <<CFG
version = 3
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.blockfile", "io.containerd.snapshotter.v1.erofs", "io.containerd.internal.v1.tracing", "io.containerd.tracing.processor.v1.otlp"]

[plugins.'io.containerd.cri.v1.images']
  snapshotter = "overlayfs"
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = "127.0.0.1:$registry_port/vk-cri/pause:3.10"
  [plugins.'io.containerd.cri.v1.images'.registry]
    config_path = "/etc/containerd/certs.d"

[plugins.'io.containerd.cri.v1.runtime']
  [plugins.'io.containerd.cri.v1.runtime'.containerd]
    default_runtime_name = "runc"
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
        BinaryName = "/usr/local/sbin/runc"
        # The systemd cgroup driver: RuntimeConfig reports it, vk-cri follows.
        SystemdCgroup = true
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = ["/usr/lib/cni"]
    conf_dir = "/etc/cni/net.d"
    max_conf_num = 1

[plugins.'io.containerd.grpc.v1.cri']
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  stream_idle_timeout = "4h0m0s"
CFG
  local reg
  for reg in "127.0.0.1:$registry_port" registry.k8s.io docker.io gcr.io; do
    mkdir -p "$seed/etc/containerd/certs.d/$reg"
    printf 'server = "http://%s:%s"\n\n[host."http://%s:%s"]\n  capabilities = ["pull", "resolve"]\n' \
      "$VM_HOST_IP" "$registry_port" "$VM_HOST_IP" "$registry_port" >"$seed/etc/containerd/certs.d/$reg/hosts.toml"
  done
  cat >"$seed/etc/cni/net.d/10-vk.conflist" <<'CNI'
{
  "cniVersion": "1.0.0",
  "name": "vk",
  "plugins": [
    {
      "type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": true, "hairpinMode": true,
      "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.90.0.0/16"}]], "routes": [{"dst": "0.0.0.0/0"}]}
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
CNI
  cat >"$seed/setup.sh" <<'SETUP'
#!/bin/sh
# Run by vk-seed.service at boot: the seed's files into place.
set -e
cp -a /opt/vk/etc/. /etc/
chmod 0600 /etc/vk-cri/*.key
SETUP
  log "seed for $name written to $seed"
}

case "$cmd" in
  seed) write_seed ;;
  start)
    flags="--nodename $name --kubeconfig /etc/vk-cri/kubeconfig --cri-endpoint unix:///run/containerd/containerd.sock"
    flags+=" --node-ip 127.0.0.1 --address 0.0.0.0 --port $port --healthz-port $((port + 1000))"
    flags+=" --tls-cert-file /etc/vk-cri/serving-$name.crt --tls-private-key-file /etc/vk-cri/serving-$name.key --client-ca-file /etc/vk-cri/client-ca.crt"
    flags+=" --root-dir /var/lib/vk-cri --pod-log-dir /var/log/pods --system-log-dir /var/log --cgroup-root /"
    flags+=" ${VKCRI_EXTRA_ARGS:-}"
    vm_ssh "mkdir -p /etc/vk-cri && printf 'VKCRI_FLAGS=%s\n' '$flags' >/etc/vk-cri/flags && systemctl start vk-cri"
    log "started vk-cri node $name in the VM (kubelet API 127.0.0.1:$port)"
    ;;
  stop) vm_ssh 'systemctl stop vk-cri' || true; fetch_log ;;
  kill) vm_ssh 'systemctl kill -s KILL vk-cri; systemctl stop vk-cri' || true; fetch_log ;;
  status) vm_ssh 'systemctl is-active -q vk-cri' ;;
  wait-ready)
    wait_for "node $name to be Ready" "${TIMEOUT:-90}" node_ready || { vm_ssh 'tail -20 /var/log/vk-cri.log' >&2 || true; exit 1; }
    wait_for "node $name's kubelet API" "${TIMEOUT:-90}" kubelet_api_serving || { vm_ssh 'tail -20 /var/log/vk-cri.log' >&2 || true; exit 1; }
    log "node $name is Ready"
    ;;
  remove)
    if vm_ssh 'systemctl is-active -q vk-cri' 2>/dev/null; then
      "$KUBECTL" --kubeconfig "$KUBECONFIG" delete pods --all-namespaces --field-selector "spec.nodeName=$name" \
        --wait=true --timeout=90s >/dev/null 2>&1 || true
    fi
    vm_ssh 'systemctl stop vk-cri' >/dev/null 2>&1 || true
    fetch_log
    "$KUBECTL" --kubeconfig "$KUBECONFIG" delete node "$name" --ignore-not-found >/dev/null 2>&1 || true
    if [[ -S "$VM_STATE/containerd.sock" ]]; then
      for sb in $("$CRICTL" --runtime-endpoint "$GUEST_CRI" pods -q 2>/dev/null); do
        "$CRICTL" --runtime-endpoint "$GUEST_CRI" stopp "$sb" >/dev/null 2>&1 || true
        "$CRICTL" --runtime-endpoint "$GUEST_CRI" rmp "$sb" >/dev/null 2>&1 || true
      done
    fi
    log "node $name removed"
    ;;
  *) die "unknown command $cmd" ;;
esac
