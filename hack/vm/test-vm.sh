#!/usr/bin/env bash
# make test-vm: boots the VM lane's guest (hack/vm/vm.sh), runs a vk-cri node in it
# (hack/vm/node.sh, node $VM_NODE on 127.0.0.1:$VM_KUBELET_PORT) against the local stack's
# control plane, runs there the e2e tests that touch cgroups, resources and volumes (VM_E2E_RUN),
# shows the pods' systemd slices, and powers the guest off, also when the tests fail.
#
# The stack must be up (hack/stack-up.sh; the lock is held shared, as hack/e2e.sh does for
# E2E_RUN). The tests reach the guest's containerd through an ssh-forwarded socket and its files
# through ssh (VKCRI_E2E_NODE_EXEC).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

VM_NODE=${VM_NODE:-vk-vm}
# The default subset: node facts, the systemd slices and v2 values, container limits seen from
# inside, OOM kills (container and pod level), in-place resize, stats and eviction, tmpfs and
# memory-backed volumes, exec and logs.
VM_E2E_RUN=${VM_E2E_RUN:-'^(TestNodeRegistersReadyWithHostFacts|TestSystemdPodSlicesCarryTheKubeletV2Values|TestSystemdPodLevelOOMKill|TestEnvCgroupLimitsFromResources|TestLifecycleOOMKilled|TestResizeCPUIncreaseInPlace|TestResizeMemoryLimitIncrease|TestResizeMemoryLimitBelowUsage|TestStatsSummary|TestStatsEvictionBestEffortFirst|TestVolumeSecretOnTmpfs|TestVolumeEmptyDirDiskMemoryAndFSGroup|TestStreamExecExitCodesAndStdin|TestLogsFollow|TestLogsOptions)$'}

[[ -f "$STACK_DIR/env" ]] || die "the local stack is not up ($STACK_DIR/env): run hack/stack-up.sh"
exec 9>"$STACK_DIR/.e2e.lock"
flock -s 9

t0=$SECONDS
mkdir -p "$VM_STATE"
stop_all() {
  local rc=$?
  "$HACK_DIR/vm/node.sh" remove "$VM_NODE" "$VM_KUBELET_PORT" 9>&- || true
  "$HACK_DIR/vm/vm.sh" stop 9>&- || true
  log "make test-vm: $1 after $((SECONDS - t0))s (boot ${boot:-?}s, image ${image_s:-?}s, tests ${tests_s:-?}s), exit code $rc"
}
trap 'stop_all finished' EXIT
trap 'exit 143' TERM INT

ti=$SECONDS
"$HACK_DIR/vm/build-image.sh" >/dev/null 9>&-
image_s=$((SECONDS - ti))
"$HACK_DIR/vm/node.sh" seed "$VM_NODE" "$VM_KUBELET_PORT" 9>&-
tb=$SECONDS
"$HACK_DIR/vm/vm.sh" start 9>&-
boot=$((SECONDS - tb))

# cm's systemd driver on the guest's systemd, without the control plane: slices made, set, read
# back and swept (cm/systemd_host_test.go).
(cd "$REPO_DIR" && go test -c -o "$VM_STATE/cm.test" ./cm) 9>&-
"$HACK_DIR/vm/vm.sh" ssh 'cat >/tmp/cm.test && chmod +x /tmp/cm.test && cd /tmp && VKCRI_TEST_SYSTEMD_CGROUPS=1 ./cm.test -test.run "^TestSystemdDriverOnThisHost$" -test.v' <"$VM_STATE/cm.test" 9>&-

# The stack's settings with the guest's runtime as the tests' CRI endpoint and the address the
# node reports (127.0.0.1, forwarded to the guest).
sed -e "s#^CRI_ENDPOINT=.*#CRI_ENDPOINT=unix://$VM_STATE/containerd.sock#" -e "s#^NODE_IP=.*#NODE_IP=127.0.0.1#" "$STACK_DIR/env" >"$VM_STATE/env"

tt=$SECONDS
rc=0
(cd "$REPO_DIR" && VKCRI_STACK_ENV="$VM_STATE/env" VKCRI_BIN="$REPO_DIR/bin/vk-cri" \
  VKCRI_E2E_NODE="$VM_NODE" VKCRI_E2E_PORT="$VM_KUBELET_PORT" \
  VKCRI_E2E_NODE_SH=hack/vm/node.sh VKCRI_E2E_NODE_EXEC="hack/vm/vm.sh ssh" \
  go test -tags e2e -count=1 -v -timeout "${VM_E2E_TIMEOUT:-45m}" -run "$VM_E2E_RUN" -skip Disruption ./test/e2e/...) 9>&- || rc=$?
tests_s=$((SECONDS - tt))

log "the guest's slices after the tests (systemctl status kubepods.slice):"
"$HACK_DIR/vm/vm.sh" ssh 'systemctl status --no-pager --lines=0 kubepods.slice; systemd-cgls --no-pager -u kubepods.slice' 9>&- || true
exit $rc
