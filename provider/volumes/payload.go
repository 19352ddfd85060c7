package volumes

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// defaultFileMode is the API's default for configMap, secret, downwardAPI and projected files.
const defaultFileMode int32 = 0o644

func modeOr(mode *int32, def int32) int32 {
	if mode != nil {
		return *mode
	}
	return def
}

// keyedPayload maps an object's keys to files: every key when items is empty, else only the
// listed keys at their paths. A listed key the object lacks is an error unless optional.
func keyedPayload(data map[string][]byte, items []v1.KeyToPath, defaultMode int32, optional bool, missing func(key string) error) (payload, error) {
	out := payload{}
	if len(items) == 0 {
		for k, v := range data {
			out[k] = fileProjection{Data: v, Mode: defaultMode}
		}
		return out, nil
	}
	for _, it := range items {
		v, ok := data[it.Key]
		if !ok {
			if optional {
				continue
			}
			return nil, missing(it.Key)
		}
		out[it.Path] = fileProjection{Data: v, Mode: modeOr(it.Mode, defaultMode)}
	}
	return out, nil
}

// configMapPayload computes the files of a configMap (or a projection of one).
func configMapPayload(cm *v1.ConfigMap, items []v1.KeyToPath, defaultMode int32, optional bool) (payload, error) {
	data := make(map[string][]byte, len(cm.Data)+len(cm.BinaryData))
	for k, v := range cm.Data {
		data[k] = []byte(v)
	}
	for k, v := range cm.BinaryData {
		data[k] = v
	}
	return keyedPayload(data, items, defaultMode, optional, func(key string) error {
		return fmt.Errorf("configmap references non-existent config key: %s", key)
	})
}

// secretPayload computes the files of a secret (or a projection of one).
func secretPayload(s *v1.Secret, items []v1.KeyToPath, defaultMode int32, optional bool) (payload, error) {
	return keyedPayload(s.Data, items, defaultMode, optional, func(key string) error {
		return fmt.Errorf("references non-existent secret key: %s", key)
	})
}

// getConfigMap reads a ConfigMap; a missing one that is optional reads as empty.
func (m *Manager) getConfigMap(ctx context.Context, ns, name string, optional bool) (*v1.ConfigMap, error) {
	if m.objects == nil {
		return nil, fmt.Errorf("no API client to read configmap %q", name)
	}
	cm, err := m.objects.ConfigMap(ctx, ns, name)
	if apierrors.IsNotFound(err) && optional {
		return &v1.ConfigMap{}, nil
	}
	return cm, err
}

// getSecret reads a Secret; a missing one that is optional reads as empty.
func (m *Manager) getSecret(ctx context.Context, ns, name string, optional bool) (*v1.Secret, error) {
	if m.objects == nil {
		return nil, fmt.Errorf("no API client to read secret %q", name)
	}
	s, err := m.objects.Secret(ctx, ns, name)
	if apierrors.IsNotFound(err) && optional {
		return &v1.Secret{}, nil
	}
	return s, err
}

// writeAtomicVolume writes a payload into the pod's volume directory with the atomic writer,
// on a tmpfs when asked (secrets never touch the disk), with the pod's fsGroup applied.
func (m *Manager) writeAtomicVolume(pod *v1.Pod, plugin, name string, p payload, tmpfs bool) (*mountedVolume, error) {
	dir := m.layout.volumeDir(pod.UID, plugin, name)
	if _, err := m.prepareDir(pod, dir, tmpfs, nil); err != nil {
		return nil, err
	}
	setPerms := func(string) error { return setOwnershipFor(pod, dir, true) }
	if _, err := newAtomicWriter(dir).Write(p, setPerms); err != nil {
		return nil, err
	}
	return &mountedVolume{Path: dir, ReadOnly: true, Tmpfs: tmpfs}, nil
}
