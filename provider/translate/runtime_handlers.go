package translate

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// RuntimeHandler is one handler the CRI runtime reports in its status, with what it can do.
type RuntimeHandler struct {
	Name                    string
	RecursiveReadOnlyMounts bool
	UserNamespaces          bool
}

// RuntimeCapabilities is what the runtime's last ready status said about its handlers and its
// features, as the kubelet keeps them in its runtimeState (kubelet.go updateRuntimeUp,
// kuberuntime/helpers.go toKubeRuntimeStatus). A runtime too old to report handlers (containerd
// 1.6) has none: then no handler supports user namespaces or recursive read-only mounts.
type RuntimeCapabilities struct {
	Handlers []RuntimeHandler
	// Features is nil when the runtime reports none.
	Features *runtimeapi.RuntimeFeatures
}

// CapabilitiesOf reads the handlers and features of a Status answer.
func CapabilitiesOf(resp *runtimeapi.StatusResponse) RuntimeCapabilities {
	var c RuntimeCapabilities
	for _, h := range resp.GetRuntimeHandlers() {
		c.Handlers = append(c.Handlers, RuntimeHandler{
			Name:                    h.GetName(),
			RecursiveReadOnlyMounts: h.GetFeatures().GetRecursiveReadOnlyMounts(),
			UserNamespaces:          h.GetFeatures().GetUserNamespaces(),
		})
	}
	if f := resp.GetFeatures(); f != nil {
		c.Features = &runtimeapi.RuntimeFeatures{
			SupplementalGroupsPolicy:  f.GetSupplementalGroupsPolicy(),
			UserNamespacesHostNetwork: f.GetUserNamespacesHostNetwork(),
			MountOptions:              f.GetMountOptions(),
		}
	}
	return c
}

func (c *RuntimeCapabilities) handler(name string) (RuntimeHandler, bool) {
	if c == nil {
		return RuntimeHandler{}, false
	}
	for _, h := range c.Handlers {
		if h.Name == name {
			return h, true
		}
	}
	return RuntimeHandler{}, false
}

// SupportsUserNamespaces answers as the kubelet's HandlerSupportsUserNamespaces
// (kubelet_getters.go): false without an error when the runtime lists no handlers, an error for
// a handler it does not list.
func (c *RuntimeCapabilities) SupportsUserNamespaces(name string) (bool, error) {
	if c == nil || len(c.Handlers) == 0 {
		return false, nil
	}
	h, ok := c.handler(name)
	if !ok {
		return false, fmt.Errorf("the handler %q is not known", name)
	}
	return h.UserNamespaces, nil
}

// SupportsRecursiveReadOnly answers as the kubelet's runtimeHandlerSupportsRecursiveReadOnlyMounts
// (kubelet_pods.go): false for a handler the runtime does not list.
func (c *RuntimeCapabilities) SupportsRecursiveReadOnly(name string) bool {
	h, _ := c.handler(name)
	return h.RecursiveReadOnlyMounts
}

// NodeRuntimeHandlers is the node's status.runtimeHandlers, in the runtime's order, as the
// kubelet's RuntimeHandlers setter (nodestatus/setters.go) writes them: every handler with both
// features spelled out. None before the runtime was first seen ready.
func (c *RuntimeCapabilities) NodeRuntimeHandlers() []v1.NodeRuntimeHandler {
	if c == nil {
		return nil
	}
	out := make([]v1.NodeRuntimeHandler, 0, len(c.Handlers))
	for _, h := range c.Handlers {
		rro, userns := h.RecursiveReadOnlyMounts, h.UserNamespaces
		out = append(out, v1.NodeRuntimeHandler{
			Name:     h.Name,
			Features: &v1.NodeRuntimeHandlerFeatures{RecursiveReadOnlyMounts: &rro, UserNamespaces: &userns},
		})
	}
	return out
}

// NodeFeatures is the node's status.features (the kubelet's NodeFeatures setter): only
// supplementalGroupsPolicy, and nothing when the runtime reports no features.
func (c *RuntimeCapabilities) NodeFeatures() *v1.NodeFeatures {
	if c == nil || c.Features == nil {
		return nil
	}
	sgp := c.Features.SupplementalGroupsPolicy
	return &v1.NodeFeatures{SupplementalGroupsPolicy: &sgp}
}
