package volumes

import (
	"context"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var getOptions = metav1.GetOptions{}

func (m *Manager) setUpConfigMap(ctx context.Context, pod *v1.Pod, name string, src *v1.ConfigMapVolumeSource) (*mountedVolume, error) {
	optional := src.Optional != nil && *src.Optional
	cm, err := m.getConfigMap(ctx, pod.Namespace, src.Name, optional)
	if err != nil {
		return nil, err
	}
	p, err := configMapPayload(cm, src.Items, modeOr(src.DefaultMode, defaultFileMode), optional)
	if err != nil {
		return nil, err
	}
	return m.writeAtomicVolume(pod, pluginConfigMap, name, p, false)
}
