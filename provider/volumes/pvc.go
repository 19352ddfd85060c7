package volumes

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
)

// setUpClaim resolves a claim to its bound volume; hostPath and local volumes are mounted from
// their path on the node. An unbound claim keeps the pod waiting.
func (m *Manager) setUpClaim(ctx context.Context, pod *v1.Pod, src *v1.PersistentVolumeClaimVolumeSource) (*mountedVolume, error) {
	if m.client == nil {
		return nil, fmt.Errorf("no API client to read claim %q", src.ClaimName)
	}
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	claim, err := m.client.CoreV1().PersistentVolumeClaims(pod.Namespace).Get(ctx, src.ClaimName, getOptions)
	if err != nil {
		return nil, fmt.Errorf("error processing PVC %s/%s: %w", pod.Namespace, src.ClaimName, err)
	}
	if claim.Status.Phase != v1.ClaimBound || claim.Spec.VolumeName == "" {
		return nil, fmt.Errorf("error processing PVC %s/%s: PVC is not bound", pod.Namespace, src.ClaimName)
	}
	pv, err := m.client.CoreV1().PersistentVolumes().Get(ctx, claim.Spec.VolumeName, getOptions)
	if err != nil {
		return nil, fmt.Errorf("error processing PVC %s/%s: %w", pod.Namespace, src.ClaimName, err)
	}
	if pv.Spec.ClaimRef != nil && pv.Spec.ClaimRef.UID != "" && pv.Spec.ClaimRef.UID != claim.UID {
		return nil, fmt.Errorf("error processing PVC %s/%s: volume %s is bound to another claim", pod.Namespace, src.ClaimName, pv.Name)
	}
	readOnly := src.ReadOnly
	switch {
	case pv.Spec.HostPath != nil:
		mv, err := m.setUpHostPath(pv.Spec.HostPath)
		if err != nil {
			return nil, err
		}
		mv.ReadOnly = readOnly
		return mv, nil
	case pv.Spec.Local != nil:
		if _, err := hostPathKind(pv.Spec.Local.Path); err != nil {
			return nil, fmt.Errorf("local volume %s: %w", pv.Name, err)
		}
		return &mountedVolume{Path: pv.Spec.Local.Path, ReadOnly: readOnly}, nil
	default:
		return nil, fmt.Errorf("persistent volume %s: only hostPath and local volumes are supported by vk-cri", pv.Name)
	}
}
