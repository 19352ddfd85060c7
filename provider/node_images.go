package provider

import (
	"context"
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The kubelet's defaults: the node status lists the 50 largest images, each under at most 5
// names.
const (
	nodeStatusMaxImages  = 50
	maxNamesPerNodeImage = 5
)

// nodeImages is the node status image list: largest first (equal sizes by descending ID),
// digests then tags as names.
func nodeImages(images []*runtimeapi.Image, max int) []v1.ContainerImage {
	sorted := append([]*runtimeapi.Image(nil), images...)
	sort.SliceStable(sorted, func(i, j int) bool {
		if sorted[i].Size == sorted[j].Size {
			return sorted[i].Id > sorted[j].Id
		}
		return sorted[i].Size > sorted[j].Size
	})
	if max >= 0 && len(sorted) > max {
		sorted = sorted[:max]
	}
	var out []v1.ContainerImage
	for _, img := range sorted {
		names := append(append([]string{}, img.RepoDigests...), img.RepoTags...)
		if len(names) > maxNamesPerNodeImage {
			names = names[:maxNamesPerNodeImage]
		}
		out = append(out, v1.ContainerImage{Names: names, SizeBytes: int64(img.Size)})
	}
	return out
}

// refreshImages reads the runtime's images into the node status; it reports whether the list
// changed. A failed listing leaves the last list.
func (np *NodeProvider) refreshImages(ctx context.Context) bool {
	lctx, cancel := context.WithTimeout(ctx, np.opts.StatusPeriod)
	defer cancel()
	list, err := np.p.rt.Images.ListImages(lctx, nil)
	if err != nil {
		np.p.log.WithError(err).Warn("listing the runtime's images for the node status")
		return false
	}
	imgs := nodeImages(list, nodeStatusMaxImages)
	np.mu.Lock()
	defer np.mu.Unlock()
	if equality.Semantic.DeepEqual(np.node.Status.Images, imgs) {
		return false
	}
	np.node.Status.Images = imgs
	return true
}
