# vk-cri's container image, built without Docker (hack/image.sh, hack/tools/image) and pushed to
# the local registry as $(REGISTRY)/vk-cri/vk-cri:$(IMAGE_TAG); and the helm CLI for charts/vk-cri.
IMAGE_TAG ?= latest
.PHONY: image image-runtime helm

## image: bin/vk-cri as an OCI image (static binary on a minimal base), pushed to the local registry.
## image-runtime: the runtime bundle the chart runs by default (vk-cri, containerd, runc, CNI plugins, busybox).
image: build
	VKCRI_IMAGE_TAG=$(IMAGE_TAG) hack/image.sh

image-runtime: build
	VKCRI_IMAGE_TAG=$(IMAGE_TAG) hack/image.sh runtime

## helm: the helm CLI built from the Go module proxy, cached in /var/cache/vk-cri (prints its path).
helm:
	hack/build-helm.sh
