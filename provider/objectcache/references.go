package objectcache

import (
	v1 "k8s.io/api/core/v1"
)

// Kind is the kind of object a pod refers to.
type Kind string

const (
	KindConfigMap Kind = "configmap"
	KindSecret    Kind = "secret"
)

// Key names a ConfigMap or Secret.
type Key struct {
	Kind            Kind
	Namespace, Name string
}

// references are the objects a pod refers to; the value is true when a volume reads the object
// (a change must then reach the pod's volumes at once).
type references map[Key]bool

func (r references) add(kind Kind, ns, name string, volume bool) {
	if name == "" {
		return
	}
	k := Key{Kind: kind, Namespace: ns, Name: name}
	r[k] = r[k] || volume
}

// podReferences lists every ConfigMap and Secret the pod refers to: its volumes (projections
// included), the env and envFrom of all its containers, and its imagePullSecrets.
func podReferences(pod *v1.Pod) references {
	refs := references{}
	ns := pod.Namespace
	for i := range pod.Spec.Volumes {
		src := &pod.Spec.Volumes[i].VolumeSource
		switch {
		case src.ConfigMap != nil:
			refs.add(KindConfigMap, ns, src.ConfigMap.Name, true)
		case src.Secret != nil:
			refs.add(KindSecret, ns, src.Secret.SecretName, true)
		case src.Projected != nil:
			for _, s := range src.Projected.Sources {
				if s.ConfigMap != nil {
					refs.add(KindConfigMap, ns, s.ConfigMap.Name, true)
				}
				if s.Secret != nil {
					refs.add(KindSecret, ns, s.Secret.Name, true)
				}
			}
		}
	}
	for _, s := range pod.Spec.ImagePullSecrets {
		refs.add(KindSecret, ns, s.Name, false)
	}
	envOf := func(env []v1.EnvVar, from []v1.EnvFromSource) {
		for _, f := range from {
			if f.ConfigMapRef != nil {
				refs.add(KindConfigMap, ns, f.ConfigMapRef.Name, false)
			}
			if f.SecretRef != nil {
				refs.add(KindSecret, ns, f.SecretRef.Name, false)
			}
		}
		for _, e := range env {
			if e.ValueFrom == nil {
				continue
			}
			if r := e.ValueFrom.ConfigMapKeyRef; r != nil {
				refs.add(KindConfigMap, ns, r.Name, false)
			}
			if r := e.ValueFrom.SecretKeyRef; r != nil {
				refs.add(KindSecret, ns, r.Name, false)
			}
		}
	}
	for i := range pod.Spec.InitContainers {
		envOf(pod.Spec.InitContainers[i].Env, pod.Spec.InitContainers[i].EnvFrom)
	}
	for i := range pod.Spec.Containers {
		envOf(pod.Spec.Containers[i].Env, pod.Spec.Containers[i].EnvFrom)
	}
	for i := range pod.Spec.EphemeralContainers {
		envOf(pod.Spec.EphemeralContainers[i].Env, pod.Spec.EphemeralContainers[i].EnvFrom)
	}
	return refs
}
