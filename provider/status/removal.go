package status

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// removalTimeout bounds the two API calls that remove one terminated pod.
const removalTimeout = 10 * time.Second

// RemoveTerminated ends a terminated pod's life in the API as the kubelet's status manager does
// (status_manager.go: syncPod writes the final status, then deletes the pod once
// canBeDeleted): it writes the final status itself (a patch, so it never loses a
// resourceVersion race the way a queued update can), then deletes the pod with grace 0. Both
// carry the pod's UID as a precondition, so a successor of the same name is never touched.
//
// pods must be the API's own client, not the pod controller's PodClient (whose Delete hands
// the pod back to its owner). final nil skips the status write. A pod gone already, or a
// successor under its name (a conflict on either call), is not an error. A failed status
// write is returned with the deletion's outcome: the deletion is still made.
func RemoveTerminated(ctx context.Context, pods corev1client.PodsGetter, pod *v1.Pod, final *v1.PodStatus) error {
	ctx, cancel := context.WithTimeout(ctx, removalTimeout)
	defer cancel()
	client := pods.Pods(pod.Namespace)
	var statusErr error
	if final != nil {
		patch, err := json.Marshal(map[string]any{
			"metadata": map[string]any{"uid": pod.UID},
			"status":   final,
		})
		if err == nil {
			_, err = client.Patch(ctx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
		}
		switch {
		case apierrors.IsNotFound(err), apierrors.IsConflict(err):
			return nil // gone already, or a successor under the same name
		case err != nil:
			statusErr = fmt.Errorf("writing the final status of the terminated pod: %w", err)
		}
	}
	zero := int64(0)
	uid := pod.UID
	err := client.Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return errors.Join(statusErr, fmt.Errorf("removing the terminated pod from the API: %w", err))
	}
	return statusErr
}
