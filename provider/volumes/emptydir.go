package volumes

import (
	"fmt"
	"os"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
)

// emptyDirMode is the mode of an emptyDir's directory: any user of any container may write.
const emptyDirMode os.FileMode = 0o777

func (m *Manager) setUpEmptyDir(pod *v1.Pod, name string, src *v1.EmptyDirVolumeSource) (*mountedVolume, error) {
	dir := m.layout.volumeDir(pod.UID, pluginEmptyDir, name)
	mv := &mountedVolume{Path: dir, SizeLimit: src.SizeLimit}
	switch src.Medium {
	case v1.StorageMediumDefault:
	case v1.StorageMediumMemory:
		mv.Tmpfs = true
	default:
		return nil, fmt.Errorf("unknown storage medium %q", src.Medium)
	}
	if _, had := m.store.volume(pod.UID, name); had {
		return mv, nil
	}
	fresh, err := m.prepareDir(pod, dir, mv.Tmpfs, src.SizeLimit)
	if err != nil {
		return nil, err
	}
	if fresh {
		if err := setOwnershipFor(pod, dir, false); err != nil {
			return nil, err
		}
	}
	return mv, nil
}

// prepareDir creates a volume directory (mode 0777), with a tmpfs on it when asked (its root
// keeps tmpfs's own 1777). It reports whether the directory is new (false after a restart of
// vk-cri, when it is kept as it is).
func (m *Manager) prepareDir(pod *v1.Pod, dir string, tmpfs bool, sizeLimit *resource.Quantity) (bool, error) {
	_, statErr := os.Stat(dir)
	existed := statErr == nil
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return false, fmt.Errorf("creating volume directory: %w", err)
	}
	if !existed {
		if err := os.Chmod(dir, emptyDirMode); err != nil {
			return false, err
		}
	}
	if !tmpfs {
		return !existed, nil
	}
	notMnt, err := m.mounter.IsLikelyNotMountPoint(dir)
	if err != nil {
		return false, err
	}
	if !notMnt {
		return false, nil
	}
	var opts []string
	if size := m.memoryVolumeSize(pod, sizeLimit); size != nil {
		opts = append(opts, fmt.Sprintf("size=%d", size.Value()))
	}
	if m.noswap {
		opts = append(opts, "noswap")
	}
	if err := m.calls.mountTmpfs(dir, opts); err != nil {
		return false, fmt.Errorf("mounting tmpfs: %w", err)
	}
	return true, nil
}

// podMemoryLimit is the pod's memory limit when every container declares one (as the kubelet
// sizes the pod's cgroup), nil otherwise.
func podMemoryLimit(pod *v1.Pod) *resource.Quantity {
	for _, cs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			if _, ok := cs[i].Resources.Limits[v1.ResourceMemory]; !ok {
				return nil
			}
		}
	}
	q, ok := resourcehelper.PodLimits(pod, resourcehelper.PodResourcesOptions{})[v1.ResourceMemory]
	if !ok {
		return nil
	}
	return &q
}
