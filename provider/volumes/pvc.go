package volumes

import (
	"context"
	"errors"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
)

// ClaimError is a claim that cannot be resolved to its volume (missing, unbound, being deleted,
// its volume missing or bound elsewhere): the kubelet's desired-state populator refuses the pod's
// volume with it, before any mount is tried.
type ClaimError struct {
	Namespace, Claim string
	Err              error
}

func (e *ClaimError) Error() string {
	return fmt.Sprintf("error processing PVC %s/%s: %v", e.Namespace, e.Claim, e.Err)
}

func (e *ClaimError) Unwrap() error { return e.Err }

// persistentVolumeError is a failed set-up of the volume a claim is bound to: the kubelet names
// the persistent volume, not the pod's volume, in its event.
type persistentVolumeError struct {
	PV  string
	Err error
}

func (e *persistentVolumeError) Error() string { return e.Err.Error() }

func (e *persistentVolumeError) Unwrap() error { return e.Err }

// setUpClaim resolves a claim to its bound volume; hostPath and local volumes are mounted from
// their path on the node. An unbound claim keeps the pod waiting.
func (m *Manager) setUpClaim(ctx context.Context, pod *v1.Pod, name string, src *v1.PersistentVolumeClaimVolumeSource) (*mountedVolume, error) {
	pv, err := m.resolveClaim(ctx, pod.Namespace, src.ClaimName)
	if err != nil {
		return nil, &ClaimError{Namespace: pod.Namespace, Claim: src.ClaimName, Err: err}
	}
	mv, err := m.setUpPersistentVolume(pod, name, pv, src.ReadOnly)
	if err != nil {
		return nil, &persistentVolumeError{PV: pv.Name, Err: err}
	}
	return mv, nil
}

// resolveClaim reads the claim and the volume it is bound to, refusing them in the kubelet's words.
func (m *Manager) resolveClaim(ctx context.Context, namespace, name string) (*v1.PersistentVolume, error) {
	if m.client == nil {
		return nil, errors.New("no API client to read claims")
	}
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	claim, err := m.client.CoreV1().PersistentVolumeClaims(namespace).Get(ctx, name, getOptions)
	if err != nil {
		return nil, fmt.Errorf("failed to fetch PVC from API server: %v", err)
	}
	switch {
	case claim.DeletionTimestamp != nil && !slices.Contains(claim.Finalizers, pvcProtectionFinalizer):
		return nil, errors.New("PVC is being deleted")
	case claim.Status.Phase != v1.ClaimBound:
		return nil, errors.New("PVC is not bound")
	case claim.Spec.VolumeName == "":
		return nil, errors.New("PVC has empty pvc.Spec.VolumeName")
	}
	pv, err := m.client.CoreV1().PersistentVolumes().Get(ctx, claim.Spec.VolumeName, getOptions)
	if err != nil {
		return nil, fmt.Errorf("failed to fetch PV %s from API server: %v", claim.Spec.VolumeName, err)
	}
	if pv.Spec.ClaimRef == nil {
		return nil, fmt.Errorf("found PV object %s but it has a nil pv.Spec.ClaimRef indicating it is not yet bound to the claim", pv.Name)
	}
	if pv.Spec.ClaimRef.UID != claim.UID {
		return nil, fmt.Errorf("found PV object %s but its pv.Spec.ClaimRef.UID %s does not point to claim.UID %s", pv.Name, pv.Spec.ClaimRef.UID, claim.UID)
	}
	return pv, nil
}

// pvcProtectionFinalizer keeps a claim in use from going; a claim being deleted without it is
// not mounted.
const pvcProtectionFinalizer = "kubernetes.io/pvc-protection"

// setUpPersistentVolume mounts a bound hostPath or local volume.
func (m *Manager) setUpPersistentVolume(pod *v1.Pod, name string, pv *v1.PersistentVolume, readOnly bool) (*mountedVolume, error) {
	switch {
	case pv.Spec.HostPath != nil:
		mv, err := m.setUpHostPath(pv.Spec.HostPath)
		if err != nil {
			return nil, err
		}
		mv.ReadOnly = readOnly
		return mv, nil
	case pv.Spec.Local != nil:
		// A local volume is a directory of the node as much as a hostPath is: a claim bound to
		// one must not reach the node's files where hostPath volumes may not.
		if m.forbidHostPath {
			return nil, fmt.Errorf("local volume %s at %s: %w", pv.Name, pv.Spec.Local.Path, ErrHostPathForbidden)
		}
		if _, err := hostPathKind(pv.Spec.Local.Path); err != nil {
			return nil, fmt.Errorf("local volume %s: %w", pv.Name, err)
		}
		// Like the kubelet's local plugin (and unlike hostPath), a writable local volume takes
		// the pod's fsGroup when it is first mounted.
		if _, had := m.store.volume(pod.UID, name); !had && !readOnly {
			if err := setOwnershipFor(pod, pv.Spec.Local.Path, false); err != nil {
				return nil, fmt.Errorf("local volume %s: applying fsGroup: %w", pv.Name, err)
			}
		}
		return &mountedVolume{Path: pv.Spec.Local.Path, ReadOnly: readOnly}, nil
	default:
		return nil, fmt.Errorf("persistent volume %s: only hostPath and local volumes are supported by vk-cri", pv.Name)
	}
}
