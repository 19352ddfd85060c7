package provider

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// runtimeHandler is one handler the CRI runtime reports in its status, with what it can do.
type runtimeHandler struct {
	Name                    string
	RecursiveReadOnlyMounts bool
	UserNamespaces          bool
}

// runtimeCapabilities is what the runtime's last ready status said about its handlers and its
// features, as the kubelet keeps them in its runtimeState (kubelet.go updateRuntimeUp,
// kuberuntime/helpers.go toKubeRuntimeStatus). A runtime too old to report handlers (containerd
// 1.6) has none: then no handler supports user namespaces or recursive read-only mounts.
type runtimeCapabilities struct {
	Handlers []runtimeHandler
	// Features is nil when the runtime reports none.
	Features *runtimeapi.RuntimeFeatures
}

// capabilitiesOf reads the handlers and features of a Status answer.
func capabilitiesOf(resp *runtimeapi.StatusResponse) runtimeCapabilities {
	var c runtimeCapabilities
	for _, h := range resp.GetRuntimeHandlers() {
		c.Handlers = append(c.Handlers, runtimeHandler{
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

func (c *runtimeCapabilities) handler(name string) (runtimeHandler, bool) {
	if c == nil {
		return runtimeHandler{}, false
	}
	for _, h := range c.Handlers {
		if h.Name == name {
			return h, true
		}
	}
	return runtimeHandler{}, false
}

// supportsUserNamespaces answers as the kubelet's HandlerSupportsUserNamespaces
// (kubelet_getters.go): false without an error when the runtime lists no handlers, an error for
// a handler it does not list.
func (c *runtimeCapabilities) supportsUserNamespaces(name string) (bool, error) {
	if c == nil || len(c.Handlers) == 0 {
		return false, nil
	}
	h, ok := c.handler(name)
	if !ok {
		return false, fmt.Errorf("the handler %q is not known", name)
	}
	return h.UserNamespaces, nil
}

// supportsRecursiveReadOnly answers as the kubelet's runtimeHandlerSupportsRecursiveReadOnlyMounts
// (kubelet_pods.go): false for a handler the runtime does not list.
func (c *runtimeCapabilities) supportsRecursiveReadOnly(name string) bool {
	h, _ := c.handler(name)
	return h.RecursiveReadOnlyMounts
}

// nodeRuntimeHandlers is the node's status.runtimeHandlers, in the runtime's order, as the
// kubelet's RuntimeHandlers setter (nodestatus/setters.go) writes them: every handler with both
// features spelled out. None before the runtime was first seen ready.
func (c *runtimeCapabilities) nodeRuntimeHandlers() []v1.NodeRuntimeHandler {
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

// nodeFeatures is the node's status.features (the kubelet's NodeFeatures setter): only
// supplementalGroupsPolicy, and nothing when the runtime reports no features.
func (c *runtimeCapabilities) nodeFeatures() *v1.NodeFeatures {
	if c == nil || c.Features == nil {
		return nil
	}
	sgp := c.Features.SupplementalGroupsPolicy
	return &v1.NodeFeatures{SupplementalGroupsPolicy: &sgp}
}

// runtimeReady reports whether a runtime status says RuntimeReady: the kubelet takes the
// handlers and features only from such a status.
func runtimeReady(st *runtimeapi.RuntimeStatus) bool {
	for _, c := range st.GetConditions() {
		if c.GetType() == runtimeapi.RuntimeReady {
			return c.GetStatus()
		}
	}
	return false
}

// runtimeCapabilities returns what the runtime last reported (nil before its first ready
// status).
func (p *Provider) runtimeCaps() *runtimeCapabilities {
	return p.caps.Load()
}

// observeRuntimeStatus takes the handlers and features of a ready runtime's status.
func (p *Provider) observeRuntimeStatus(resp *runtimeapi.StatusResponse) {
	if resp == nil || !runtimeReady(resp.GetStatus()) {
		return
	}
	c := capabilitiesOf(resp)
	p.caps.Store(&c)
}

// applyRuntimeCapabilities writes the runtime's handlers and features into the node's status,
// as the kubelet's RuntimeHandlers and NodeFeatures setters do at each status update, and
// reports whether they changed.
func (np *NodeProvider) applyRuntimeCapabilities(node *v1.Node) bool {
	caps := np.p.runtimeCaps()
	handlers, features := caps.nodeRuntimeHandlers(), caps.nodeFeatures()
	if equality.Semantic.DeepEqual(node.Status.RuntimeHandlers, handlers) && equality.Semantic.DeepEqual(node.Status.Features, features) {
		return false
	}
	node.Status.RuntimeHandlers, node.Status.Features = handlers, features
	return true
}
