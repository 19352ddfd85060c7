package streaming

import (
	"net/http"
	"net/url"

	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/proxy"
	translator "k8s.io/apiserver/pkg/util/proxy"
	"k8s.io/cri-streaming/pkg/streaming/remotecommand"
	"k8s.io/streaming/pkg/httpstream/wsstream"
)

type commandKind string

const (
	execCommand   commandKind = "exec"
	attachCommand commandKind = "attach"
)

// remoteCommandHandler serves /exec and /attach.
type remoteCommandHandler struct {
	host Host
	cfg  config
	kind commandKind
}

func (h *remoteCommandHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	container, uid := r.PathValue("container"), types.UID(r.PathValue("uid"))
	opts, err := remotecommand.NewOptions(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	pod, ok := requestedPod(w, r, h.host)
	if !ok {
		return
	}
	// A UID in the path goes to the host, which answers as the kubelet does: an exec is the
	// named pod's whatever the UID, an attach naming another UID is refused (500, "pod <name>
	// not found"); neither ever reaches another pod's containers.
	streams := Streams{Stdin: opts.Stdin, Stdout: opts.Stdout, Stderr: opts.Stderr, TTY: opts.TTY}
	var location *url.URL
	if h.kind == execCommand {
		location, err = h.host.ExecURL(r.Context(), pod, uid, container, r.URL.Query()[v1.ExecCommandParam], streams)
	} else {
		location, err = h.host.AttachURL(r.Context(), pod, uid, container, streams)
	}
	if err != nil {
		h.cfg.refuse(w, r, string(h.kind), err)
		return
	}
	var proxied http.Handler = proxy.NewUpgradeAwareHandler(location, nil, false, true, &responder{log: h.cfg.log})
	// WebSocket clients (kubectl's default, passed through by the API server to nodes that
	// declare it) get their streams translated to the runtime's SPDY.
	if wsstream.IsWebSocketRequestWithStreamCloseProtocol(r) {
		proxied = translator.NewStreamTranslatorHandler(location, nil, 0, translator.Options{
			Stdin: opts.Stdin, Stdout: opts.Stdout, Stderr: opts.Stderr, Tty: opts.TTY,
		})
	}
	proxied.ServeHTTP(withIdleTimeout(w, h.cfg.idleTimeout), r)
}

// responder answers a failed proxy attempt as the kubelet does: 500 with the error.
type responder struct {
	log *logrus.Entry
}

func (r *responder) Error(w http.ResponseWriter, req *http.Request, err error) {
	r.log.WithError(err).WithField("uri", req.URL.Path).Warn("proxying a stream to the runtime")
	http.Error(w, err.Error(), http.StatusInternalServerError)
}
