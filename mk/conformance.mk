# The Kubernetes e2e NodeConformance suite (v1.37.2) against one node of the local stack
# (hack/conformance.sh; what the stand-in images are: hack/conformance/README.md).
#
#   make conformance NODE=<node>               run it; results in _output/conformance/<node>/
#   make conformance-compare VK=<node> REF=<node>  both tallies, and what passes on REF but fails on VK
#   make conformance-build                     only build e2e.test, ginkgo, agnhost (cached) and helpers
#   make conformance-vk                        a fresh vk-cri node vk-conf on a control plane of its own
#                                              (hack/conformance-plane.sh: nothing of the main stack is
#                                              cordoned, make test can run meanwhile); results in
#                                              _output/conformance/vk-conf/; plane removed afterwards
#
# CONFORMANCE_FOCUS, CONFORMANCE_SKIP (ginkgo regexps), CONFORMANCE_TIMEOUT (default 90m) and
# CONFORMANCE_NODES (ginkgo processes, default 4) may be set on the command line or in the
# environment, e.g. make conformance NODE=ref CONFORMANCE_FOCUS='Pods should get a host IP'.

.PHONY: conformance conformance-compare conformance-build conformance-vk

export CONFORMANCE_FOCUS CONFORMANCE_SKIP CONFORMANCE_TIMEOUT CONFORMANCE_NODES

conformance:
	@if [ -z "$(NODE)" ]; then echo "usage: make conformance NODE=<node name>" >&2; exit 2; fi
	hack/conformance.sh run '$(NODE)'

conformance-compare:
	@if [ -z "$(VK)" ] || [ -z "$(REF)" ]; then echo "usage: make conformance-compare VK=<node> REF=<node>" >&2; exit 2; fi
	@hack/conformance.sh compare '$(VK)' '$(REF)'

conformance-build:
	hack/conformance.sh build

# Some specs reach the node's kubelet API at the kubelet's fixed port 10250 (e2e's ports.KubeletPort),
# whatever the node reports: the node under test listens there (make demo's node uses it too).
CONFORMANCE_VK_PORT ?= 10250

conformance-vk: build
	hack/conformance-plane.sh up
	hack/conformance-plane.sh run hack/node.sh remove vk-conf
	hack/conformance-plane.sh run hack/node.sh start vk-conf $(CONFORMANCE_VK_PORT)
	hack/conformance-plane.sh run hack/node.sh wait-ready vk-conf
	rc=0; hack/conformance-plane.sh run hack/conformance.sh run vk-conf || rc=$$?; \
	  hack/conformance-plane.sh down; exit $$rc
