# make test-vm: the VM lane (hack/vm): a Debian 12 guest under qemu's software emulation with
# systemd on cgroup v2, containerd 2.x with SystemdCgroup = true and a vk-cri node inside, against
# the local stack's control plane; runs the e2e tests that touch cgroups, resources and volumes
# there (VM_E2E_RUN), shows the pods' slices, and powers the guest off.
.PHONY: test-vm vm-image
test-vm: build
	hack/vm/test-vm.sh

vm-image:
	hack/vm/build-image.sh
