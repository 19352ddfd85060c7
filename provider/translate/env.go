package translate

import (
	"context"
	"fmt"
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-cri/vk-cri/provider/downward"
)

// EnvInput is what a container's environment is computed from.
type EnvInput struct {
	Pod       *v1.Pod
	Container *v1.Container
	// Runtime holds the sandbox's IPs and the node's, known once the sandbox runs.
	Runtime downward.RuntimeInfo
	// Allocatable is what a resourceFieldRef limit the container does not set reports.
	Allocatable v1.ResourceList
	// Services are all the cluster's services; nil when the service list was never read.
	Services []*v1.Service
}

// ContainerEnvironment is a container's resolved environment: the list in the order the
// container declares it, then the service variables; and the values by name, which $(VAR) in
// command and args expand to.
type ContainerEnvironment struct {
	List   []*runtimeapi.KeyValue
	Values map[string]string
}

// ObjectReader reads ConfigMaps and Secrets by name; a missing one is the kubelet's NotFound
// error.
type ObjectReader interface {
	ConfigMap(ctx context.Context, namespace, name string) (*v1.ConfigMap, error)
	Secret(ctx context.Context, namespace, name string) (*v1.Secret, error)
}

// ResolveEnv computes a container's environment as the kubelet does: envFrom sources first (a
// prefix prepended to each key), then env (overriding them), where literal values expand
// $(VAR) references to earlier variables and service variables, and valueFrom reads a pod
// field, a resource, a ConfigMap key or a Secret key. A missing object or key that is not
// optional is an error with the kubelet's message; the container then waits with
// CreateContainerConfigError and is retried.
func ResolveEnv(ctx context.Context, objs ObjectReader, in EnvInput) (ContainerEnvironment, error) {
	pod, c := in.Pod, in.Container
	enableLinks := pod.Spec.EnableServiceLinks == nil || *pod.Spec.EnableServiceLinks
	svcEnv := serviceEnv(in.Services, pod.Namespace, enableLinks)

	values := map[string]string{}
	var order []string
	set := func(k, v string) {
		if _, seen := values[k]; !seen {
			order = append(order, k)
		}
		values[k] = v
	}
	refs := envRefs{objs: objs, ns: pod.Namespace, configMaps: map[string]*v1.ConfigMap{}, secrets: map[string]*v1.Secret{}}

	for _, from := range c.EnvFrom {
		data, err := refs.envFromData(ctx, from)
		if err != nil {
			return ContainerEnvironment{}, err
		}
		for _, k := range slices.Sorted(maps.Keys(data)) {
			set(from.Prefix+k, data[k])
		}
	}

	lookup := EnvLookup(values, svcEnv)
	for _, e := range c.Env {
		v := e.Value
		switch {
		case v != "":
			v = expandVars(v, lookup)
		case e.ValueFrom != nil:
			var skip bool
			var err error
			v, skip, err = refs.valueFrom(ctx, in, e.ValueFrom)
			if err != nil {
				return ContainerEnvironment{}, err
			}
			if skip {
				continue
			}
		}
		set(e.Name, v)
	}

	list := make([]*runtimeapi.KeyValue, 0, len(order)+len(svcEnv))
	for _, k := range order {
		list = append(list, &runtimeapi.KeyValue{Key: k, Value: []byte(values[k])})
	}
	for _, k := range slices.Sorted(maps.Keys(svcEnv)) {
		if _, declared := values[k]; !declared {
			list = append(list, &runtimeapi.KeyValue{Key: k, Value: []byte(svcEnv[k])})
			values[k] = svcEnv[k]
		}
	}
	return ContainerEnvironment{List: list, Values: values}, nil
}

// envRefs reads the ConfigMaps and Secrets one container refers to, each once.
type envRefs struct {
	objs       ObjectReader
	ns         string
	configMaps map[string]*v1.ConfigMap
	secrets    map[string]*v1.Secret
}

func (r *envRefs) configMap(ctx context.Context, name string) (*v1.ConfigMap, error) {
	if cm, ok := r.configMaps[name]; ok {
		return cm, nil
	}
	if r.objs == nil {
		return nil, fmt.Errorf("couldn't get configMap %v/%v, no kubeClient defined", r.ns, name)
	}
	cm, err := r.objs.ConfigMap(ctx, r.ns, name)
	if err != nil {
		return nil, err
	}
	r.configMaps[name] = cm
	return cm, nil
}

func (r *envRefs) secret(ctx context.Context, name string) (*v1.Secret, error) {
	if s, ok := r.secrets[name]; ok {
		return s, nil
	}
	if r.objs == nil {
		return nil, fmt.Errorf("couldn't get secret %v/%v, no kubeClient defined", r.ns, name)
	}
	s, err := r.objs.Secret(ctx, r.ns, name)
	if err != nil {
		return nil, err
	}
	r.secrets[name] = s
	return s, nil
}

// envFromData is the key/value data of one envFrom source; an optional source that does not
// exist gives none.
func (r *envRefs) envFromData(ctx context.Context, from v1.EnvFromSource) (map[string]string, error) {
	switch {
	case from.ConfigMapRef != nil:
		cm, err := r.configMap(ctx, from.ConfigMapRef.Name)
		if err != nil {
			if apierrors.IsNotFound(err) && isTrue(from.ConfigMapRef.Optional) {
				return nil, nil
			}
			return nil, err
		}
		return cm.Data, nil
	case from.SecretRef != nil:
		s, err := r.secret(ctx, from.SecretRef.Name)
		if err != nil {
			if apierrors.IsNotFound(err) && isTrue(from.SecretRef.Optional) {
				return nil, nil
			}
			return nil, err
		}
		data := make(map[string]string, len(s.Data))
		for k, v := range s.Data {
			data[k] = string(v)
		}
		return data, nil
	}
	return nil, nil
}

// valueFrom resolves one env valueFrom; skip is true when an optional reference is missing and
// the variable is left out.
func (r *envRefs) valueFrom(ctx context.Context, in EnvInput, src *v1.EnvVarSource) (value string, skip bool, err error) {
	switch {
	case src.FieldRef != nil:
		v, err := downward.FieldValue(in.Pod, src.FieldRef, in.Runtime)
		return v, false, err
	case src.ResourceFieldRef != nil:
		v, err := downward.ResourceValue(in.Pod, in.Container, src.ResourceFieldRef, in.Allocatable)
		return v, false, err
	case src.ConfigMapKeyRef != nil:
		ref := src.ConfigMapKeyRef
		return r.keyValue(ref.Name, ref.Key, "ConfigMap", isTrue(ref.Optional), func() (map[string]string, error) {
			cm, err := r.configMap(ctx, ref.Name)
			if err != nil {
				return nil, err
			}
			return cm.Data, nil
		})
	case src.SecretKeyRef != nil:
		ref := src.SecretKeyRef
		return r.keyValue(ref.Name, ref.Key, "Secret", isTrue(ref.Optional), func() (map[string]string, error) {
			s, err := r.secret(ctx, ref.Name)
			if err != nil {
				return nil, err
			}
			v, ok := s.Data[ref.Key]
			if !ok {
				return map[string]string{}, nil
			}
			return map[string]string{ref.Key: string(v)}, nil
		})
	case src.FileKeyRef != nil:
		return "", false, fmt.Errorf("env from a file of volume %q is not supported by vk-cri", src.FileKeyRef.VolumeName)
	}
	return "", false, nil
}

// keyValue reads one key of a ConfigMap's or Secret's data; a missing object or key of an
// optional reference skips the variable, otherwise it is the kubelet's error.
func (r *envRefs) keyValue(name, key, kind string, optional bool, data func() (map[string]string, error)) (string, bool, error) {
	d, err := data()
	if err != nil {
		if apierrors.IsNotFound(err) && optional {
			return "", true, nil
		}
		return "", false, err
	}
	v, ok := d[key]
	if !ok {
		if optional {
			return "", true, nil
		}
		return "", false, fmt.Errorf("couldn't find key %v in %s %v/%v", key, kind, r.ns, name)
	}
	return v, false, nil
}

func isTrue(b *bool) bool { return b != nil && *b }
