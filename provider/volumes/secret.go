package volumes

import (
	"context"

	v1 "k8s.io/api/core/v1"
)

// setUpSecret writes a secret volume on a tmpfs of its own: secret data never reaches the disk.
func (m *Manager) setUpSecret(ctx context.Context, pod *v1.Pod, name string, src *v1.SecretVolumeSource) (*mountedVolume, error) {
	optional := src.Optional != nil && *src.Optional
	s, err := m.getSecret(ctx, pod.Namespace, src.SecretName, optional)
	if err != nil {
		return nil, err
	}
	p, err := secretPayload(s, src.Items, modeOr(src.DefaultMode, defaultFileMode), optional)
	if err != nil {
		return nil, err
	}
	return m.writeAtomicVolume(pod, pluginSecret, name, p, true)
}
