package server

import (
	"net/http"
	"time"
)

// connectionLimits bound what one client connection may hold of the server: how long it may
// take to send its request, to read the answer, to stay open between requests, and how large
// its headers may be.
type connectionLimits struct {
	// ReadHeader is how long a client may take to send a request's headers.
	ReadHeader time.Duration
	// Read bounds the reading of a whole request, Write the writing of its response (a
	// streamed log included). Connections upgraded for exec, attach and port-forward are
	// hijacked, and net/http clears both deadlines on them: those streams are bounded by the
	// streaming idle timeout instead (package streaming).
	Read, Write time.Duration
	// Idle is how long a kept-alive connection may wait for its next request.
	Idle time.Duration
	// MaxHeaderBytes bounds the request line and headers; a larger request gets 431.
	MaxHeaderBytes int
}

// kubeletConnectionLimits are the kubelet API server's (pkg/kubelet/server/server.go,
// ListenAndServeKubeletServer): 90 s idle, as http.DefaultTransport's keep-alive, 4 h to read a
// request and to write its answer (so `logs -f` ends after 4 h, as with the kubelet), 1 MiB of
// headers. The kubelet sets no ReadHeaderTimeout, which leaves a client 4 h to trickle its
// headers in; vk-cri keeps 30 s for them, which no real client comes near.
func kubeletConnectionLimits() connectionLimits {
	return connectionLimits{
		ReadHeader:     30 * time.Second,
		Read:           4 * time.Hour,
		Write:          4 * time.Hour,
		Idle:           90 * time.Second,
		MaxHeaderBytes: 1 << 20,
	}
}

// apply sets the limits on srv.
func (l connectionLimits) apply(srv *http.Server) {
	srv.ReadHeaderTimeout = l.ReadHeader
	srv.ReadTimeout = l.Read
	srv.WriteTimeout = l.Write
	srv.IdleTimeout = l.Idle
	srv.MaxHeaderBytes = l.MaxHeaderBytes
}
