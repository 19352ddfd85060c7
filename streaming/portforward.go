package streaming

import (
	"net/http"

	"github.com/sirupsen/logrus"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/proxy"
	translator "k8s.io/apiserver/pkg/util/proxy"
	cristreaming "k8s.io/cri-streaming/pkg/streaming"
	"k8s.io/cri-streaming/pkg/streaming/portforward"
	"k8s.io/streaming/pkg/httpstream/wsstream"
)

// portForwardHandler serves /portForward.
type portForwardHandler struct {
	host Host
	cfg  config
}

func (h *portForwardHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ns, podName, uid := r.PathValue("namespace"), r.PathValue("pod"), types.UID(r.PathValue("uid"))
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
	pod, err := h.host.GetPod(r.Context(), ns, podName)
	if err != nil {
		writeError(w, http.StatusNotFound, "pod does not exist")
		return
	}
	if uid != "" && pod.UID != uid {
		writeError(w, http.StatusNotFound, "pod not found")
		return
	}
	location, err := h.host.PortForwardURL(r.Context(), pod, uid, opts.Ports)
	if err != nil {
		h.cfg.log.WithError(err).WithField("pod", ns+"/"+podName).Info("port-forward refused")
		_ = cristreaming.WriteError(err, w)
		return
	}
	var proxied http.Handler = proxy.NewUpgradeAwareHandler(location, nil, false, true, &responder{log: h.cfg.log.WithFields(logrus.Fields{"pod": ns + "/" + podName})})
	if tunneled {
		proxied = translator.NewTunnelingHandler(proxied)
	}
	proxied.ServeHTTP(withIdleTimeout(w, h.cfg.idleTimeout), r)
}
