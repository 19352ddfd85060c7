package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	kubeletapis "k8s.io/kubelet/pkg/apis"
)

// validateNodeLabels checks --node-labels as the API server would check them on the Node. With a
// node identity (nodeIdentity) it also refuses the kubernetes.io and k8s.io labels that
// NodeRestriction forbids a node to set on itself, as the kubelet refuses them at start
// (cmd/kubelet/app/options: only the kubelet labels and the kubelet.kubernetes.io and
// node.kubernetes.io namespaces). Other credentials are not held by NodeRestriction, and the
// Helm chart still labels its nodes app.kubernetes.io/*.
func validateNodeLabels(labels map[string]string, nodeIdentity bool) error {
	var errs []error
	var restricted []string
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		if nodeIdentity && isKubernetesLabel(k) && !kubeletapis.IsKubeletLabel(k) {
			restricted = append(restricted, k)
		}
		if msgs := validation.IsQualifiedName(k); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("--node-labels: invalid key %q: %s", k, strings.Join(msgs, "; ")))
		}
		if msgs := validation.IsValidLabelValue(labels[k]); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("--node-labels: invalid value %q of %q: %s", labels[k], k, strings.Join(msgs, "; ")))
		}
	}
	if len(restricted) > 0 {
		errs = append(errs, fmt.Errorf("--node-labels: a node may not set the kubernetes.io or k8s.io labels %s (NodeRestriction); allowed are %s and the namespaces %s",
			strings.Join(restricted, ", "), strings.Join(kubeletapis.KubeletLabels(), ", "), strings.Join(kubeletapis.KubeletLabelNamespaces(), ", ")))
	}
	return utilerrors.NewAggregate(errs)
}

// isKubernetesLabel: the key's namespace is kubernetes.io or k8s.io or below them.
func isKubernetesLabel(key string) bool {
	ns, _, found := strings.Cut(key, "/")
	if !found {
		return false
	}
	return ns == "kubernetes.io" || strings.HasSuffix(ns, ".kubernetes.io") || ns == "k8s.io" || strings.HasSuffix(ns, ".k8s.io")
}

// parseTaints reads --register-with-taints entries written as the kubelet's flag takes them:
// key=value:Effect or key:Effect.
func parseTaints(specs []string) ([]v1.Taint, error) {
	var taints []v1.Taint
	var errs []error
	seen := map[string]bool{}
	for _, spec := range specs {
		t, err := parseTaint(spec)
		if err != nil {
			errs = append(errs, fmt.Errorf("--register-with-taints: %w", err))
			continue
		}
		id := t.Key + ":" + string(t.Effect)
		if seen[id] {
			errs = append(errs, fmt.Errorf("--register-with-taints: taint %s given twice", id))
			continue
		}
		seen[id] = true
		taints = append(taints, t)
	}
	return taints, utilerrors.NewAggregate(errs)
}

func parseTaint(spec string) (v1.Taint, error) {
	keyValue, effect, ok := strings.Cut(spec, ":")
	if !ok || effect == "" {
		return v1.Taint{}, fmt.Errorf("%q: want key=value:Effect or key:Effect", spec)
	}
	t := v1.Taint{Effect: v1.TaintEffect(effect)}
	t.Key, t.Value, _ = strings.Cut(keyValue, "=")
	switch t.Effect {
	case v1.TaintEffectNoSchedule, v1.TaintEffectPreferNoSchedule, v1.TaintEffectNoExecute:
	default:
		return v1.Taint{}, fmt.Errorf("%q: effect must be NoSchedule, PreferNoSchedule or NoExecute", spec)
	}
	if msgs := validation.IsQualifiedName(t.Key); len(msgs) > 0 {
		return v1.Taint{}, fmt.Errorf("%q: invalid key: %s", spec, strings.Join(msgs, "; "))
	}
	if msgs := validation.IsValidLabelValue(t.Value); len(msgs) > 0 {
		return v1.Taint{}, fmt.Errorf("%q: invalid value: %s", spec, strings.Join(msgs, "; "))
	}
	return t, nil
}

// nodeOwnerReferences makes the ClusterRole named by --node-owner-clusterrole the owner of the
// Node vk-cri registers: deleting that role (a Helm release's, at uninstall) lets the garbage
// collector delete the node. Nodes are cluster-scoped, so their owner must be too.
func nodeOwnerReferences(ctx context.Context, client kubernetes.Interface, clusterRole string) ([]metav1.OwnerReference, error) {
	if clusterRole == "" {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	role, err := client.RbacV1().ClusterRoles().Get(ctx, clusterRole, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("--node-owner-clusterrole: reading ClusterRole %s: %w", clusterRole, err)
	}
	return []metav1.OwnerReference{{
		APIVersion: rbacv1.SchemeGroupVersion.String(),
		Kind:       "ClusterRole",
		Name:       role.Name,
		UID:        role.UID,
	}}, nil
}
