package streaming

import (
	"net/http"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/proxy"
	translator "k8s.io/apiserver/pkg/util/proxy"
	"k8s.io/cri-streaming/pkg/streaming/portforward"
	"k8s.io/streaming/pkg/httpstream/wsstream"
)

// portForwardHandler serves /portForward.
type portForwardHandler struct {
	host Host
	cfg  config
}

func (h *portForwardHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	uid := types.UID(r.PathValue("uid"))
	// WebSocket clients tunnel SPDY through the WebSocket: the ports travel inside it.
	tunneled := wsstream.IsWebSocketRequestWithTunnelingProtocol(r)
	opts := &portforward.V4Options{}
	if !tunneled {
		var err error
		if opts, err = portforward.NewV4Options(r); err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
	}
	pod, ok := requestedPod(w, r, h.host)
	if !ok {
		return
	}
	if uid != "" && pod.UID != uid {
		writeError(w, http.StatusNotFound, "pod not found")
		return
	}
	location, err := h.host.PortForwardURL(r.Context(), pod, uid, opts.Ports)
	if err != nil {
		h.cfg.refuse(w, r, "port-forward", err)
		return
	}
	var proxied http.Handler = proxy.NewUpgradeAwareHandler(location, nil, false, true, &responder{log: h.cfg.log})
	if tunneled {
		proxied = translator.NewTunnelingHandler(proxied)
	}
	proxied.ServeHTTP(withIdleTimeout(w, h.cfg.idleTimeout), r)
}
