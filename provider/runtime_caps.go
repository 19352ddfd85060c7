package provider

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-cri/vk-cri/provider/translate"
)

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

// translate.RuntimeCapabilities returns what the runtime last reported (nil before its first ready
// status).
func (p *Provider) runtimeCaps() *translate.RuntimeCapabilities {
	return p.caps.Load()
}

// observeRuntimeStatus takes the handlers and features of a ready runtime's status.
func (p *Provider) observeRuntimeStatus(resp *runtimeapi.StatusResponse) {
	if resp == nil || !runtimeReady(resp.GetStatus()) {
		return
	}
	c := translate.CapabilitiesOf(resp)
	p.caps.Store(&c)
}

// applyRuntimeCapabilities writes the runtime's handlers and features into the node's status,
// as the kubelet's RuntimeHandlers and NodeFeatures setters do at each status update, and
// reports whether they changed.
func (np *NodeProvider) applyRuntimeCapabilities(node *v1.Node) bool {
	caps := np.p.runtimeCaps()
	handlers, features := caps.NodeRuntimeHandlers(), caps.NodeFeatures()
	if equality.Semantic.DeepEqual(node.Status.RuntimeHandlers, handlers) && equality.Semantic.DeepEqual(node.Status.Features, features) {
		return false
	}
	node.Status.RuntimeHandlers, node.Status.Features = handlers, features
	return true
}
