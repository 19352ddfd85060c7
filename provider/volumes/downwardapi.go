package volumes

import (
	"errors"

	v1 "k8s.io/api/core/v1"

	"github.com/vk-cri/vk-cri/provider/downward"
)

// downwardPayload computes the files of a downwardAPI volume (or projection): pod fields
// (labels and annotations in the kubelet's key="value" lines) and container resources.
func downwardPayload(pod *v1.Pod, items []v1.DownwardAPIVolumeFile, defaultMode int32, allocatable v1.ResourceList) (payload, error) {
	out := payload{}
	var errs []error
	for _, it := range items {
		var value string
		var err error
		switch {
		case it.FieldRef != nil:
			value, err = downward.FieldValue(pod, it.FieldRef, downward.RuntimeInfo{})
		case it.ResourceFieldRef != nil:
			value, err = downward.ResourceValue(pod, nil, it.ResourceFieldRef, allocatable)
		default:
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out[it.Path] = fileProjection{Data: []byte(value), Mode: modeOr(it.Mode, defaultMode)}
	}
	return out, errors.Join(errs...)
}

func (m *Manager) nodeAllocatable() v1.ResourceList {
	if m.allocatable == nil {
		return nil
	}
	return m.allocatable()
}

func (m *Manager) setUpDownwardAPI(pod *v1.Pod, name string, src *v1.DownwardAPIVolumeSource) (*mountedVolume, error) {
	p, err := downwardPayload(pod, src.Items, modeOr(src.DefaultMode, defaultFileMode), m.nodeAllocatable())
	if err != nil {
		return nil, err
	}
	return m.writeAtomicVolume(pod, pluginDownwardAPI, name, p, true)
}
