# The reference node: the upstream kubelet v1.37.2 as node "ref" beside the vk-cri nodes, on its
# own containerd instance "ref" (hack/ref.sh). Left running until ref-down.
.PHONY: ref-up ref-down ref-status

## ref-up: the local stack (if not up), then the reference kubelet; waits until node "ref" is Ready.
ref-up:
	hack/ref.sh up

## ref-down: deletes its pods and Node, stops the kubelet and containerd "ref", cleans up.
ref-down:
	hack/ref.sh down

ref-status:
	hack/ref.sh status
