package provider

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-cri/vk-cri/provider/translate"
)

// RuntimeHandlerResolver resolves a pod's runtimeClassName to the CRI runtime handler
// (provider/runtimeclass.Manager; the kubelet's RuntimeHandlerResolver).
type RuntimeHandlerResolver interface {
	LookupRuntimeHandler(runtimeClassName *string) (string, error)
}

// runtimeHandlerFor is the handler the pod's sandbox runs with: "" (the runtime's default) for
// a pod without a RuntimeClass; an error (NotFound) for a RuntimeClass that does not exist.
func (p *Provider) runtimeHandlerFor(pod *v1.Pod) (string, error) {
	if p.cfg.RuntimeClasses == nil {
		return "", nil
	}
	return p.cfg.RuntimeClasses.LookupRuntimeHandler(pod.Spec.RuntimeClassName)
}

// podUsernsOptions is the UsernsOptions of the pod's sandbox and containers, the user namespace
// part of the kubelet's NamespacesForPod (kuberuntime/util/util.go): the RuntimeClass is looked
// up first (a missing one fails every pod), then the user namespace is decided and, for a pod
// with one of its own, its ID range allocated (or read back).
func (p *Provider) podUsernsOptions(pod *v1.Pod) (*runtimeapi.UserNamespace, error) {
	handler, err := p.runtimeHandlerFor(pod)
	if err != nil {
		return nil, err
	}
	req, err := translate.UsernsRequestFor(pod, handler, p.runtimeCaps())
	if err != nil {
		return nil, err
	}
	if req == translate.UsernsNode {
		return translate.NodeUserns(), nil
	}
	r, err := p.userns.rangeFor(pod.UID)
	if err != nil {
		return nil, err
	}
	return translate.PodUserns(r), nil
}

// supportsRecursiveReadOnly reports whether the pod's handler makes recursive read-only mounts
// (the kubelet's runtimeClassSupportsRecursiveReadOnlyMounts): false when its RuntimeClass
// cannot be found.
func (p *Provider) supportsRecursiveReadOnly(pod *v1.Pod) bool {
	handler, err := p.runtimeHandlerFor(pod)
	if err != nil {
		return false
	}
	return p.runtimeCaps().SupportsRecursiveReadOnly(handler)
}

// readRuntimeStatus asks the runtime for its status and keeps its handlers and features.
func (p *Provider) readRuntimeStatus(ctx context.Context) error {
	resp, err := p.rt.Runtime.Status(ctx, false)
	if err != nil {
		return fmt.Errorf("runtime status: %w", err)
	}
	p.observeRuntimeStatus(resp)
	return nil
}
