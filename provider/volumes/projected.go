package volumes

import (
	"context"
	"errors"

	v1 "k8s.io/api/core/v1"
)

// setUpProjected writes every source of a projected volume into one directory, on a tmpfs (it
// may hold secrets and tokens).
func (m *Manager) setUpProjected(ctx context.Context, pod *v1.Pod, name string, src *v1.ProjectedVolumeSource) (*mountedVolume, error) {
	defaultMode := modeOr(src.DefaultMode, defaultFileMode)
	out := payload{}
	var errs []error
	add := func(p payload, err error) {
		if err != nil {
			errs = append(errs, err)
			return
		}
		for k, v := range p {
			out[k] = v
		}
	}
	for _, s := range src.Sources {
		switch {
		case s.Secret != nil:
			optional := s.Secret.Optional != nil && *s.Secret.Optional
			sec, err := m.getSecret(ctx, pod.Namespace, s.Secret.Name, optional)
			if err != nil {
				add(nil, err)
				continue
			}
			add(secretPayload(sec, s.Secret.Items, defaultMode, optional))
		case s.ConfigMap != nil:
			optional := s.ConfigMap.Optional != nil && *s.ConfigMap.Optional
			cm, err := m.getConfigMap(ctx, pod.Namespace, s.ConfigMap.Name, optional)
			if err != nil {
				add(nil, err)
				continue
			}
			add(configMapPayload(cm, s.ConfigMap.Items, defaultMode, optional))
		case s.DownwardAPI != nil:
			add(downwardPayload(pod, s.DownwardAPI.Items, defaultMode, m.nodeAllocatable()))
		case s.ServiceAccountToken != nil:
			token, err := m.serviceAccountToken(ctx, pod, name, s.ServiceAccountToken)
			if err != nil {
				add(nil, err)
				continue
			}
			mode := defaultMode
			if fsGroup(pod) != nil {
				// Readable by the owner only: the group the pod shares is not to read it.
				mode = 0o600
			}
			out[s.ServiceAccountToken.Path] = fileProjection{Data: []byte(token), Mode: mode}
		default:
			errs = append(errs, errors.New("projected source type not supported by vk-cri"))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return m.writeAtomicVolume(pod, pluginProjected, name, out, true)
}
