package stats

import (
	"context"
	"errors"

	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// ImageFsStats measures the runtime's image file system alone, as the summary's
// node.runtime.imageFs (the kubelet's ImageFsStats, which its image GC reads): the runtime's
// ImageFsInfo for usage, cAdvisor for the file system's capacity and free space.
func (c *Collector) ImageFsStats(ctx context.Context) (*statsapi.FsStats, error) {
	u, fi := c.imageFs(ctx, c.host.now())
	if u == nil {
		return nil, errors.New("the runtime reports no image file system")
	}
	if fi == nil {
		return nil, errors.New("cannot size the runtime's image file system " + u.GetFsId().GetMountpoint())
	}
	return imageFsStats(u, fi), nil
}
