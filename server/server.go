// Package server is vk-cri's kubelet API: the HTTPS server the API server calls for logs, exec,
// attach, port-forward, stats and metrics, with the kubelet's authentication and authorisation
// in front of every route, and the plain-HTTP localhost healthz port.
package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/sirupsen/logrus"
)

// Server serves the kubelet API on one address.
type Server struct {
	addr   string
	cert   CertificateSource
	auth   *Auth
	routes *routeTable
	log    *logrus.Entry
	// requests counts requests when set (WithRequestMetrics).
	requests RequestRecorder
	// limits bound each connection (the kubelet's by default).
	limits connectionLimits
}

// Option configures a Server.
type Option func(*Server)

// WithRoutes attaches route groups; a pattern registered again later replaces the earlier handler.
func WithRoutes(registrars ...Registrar) Option {
	return func(s *Server) {
		for _, r := range registrars {
			r(s.routes)
		}
	}
}

// WithLogger sets the logger (default: logrus' standard logger).
func WithLogger(l *logrus.Entry) Option { return func(s *Server) { s.log = l } }

// New returns a server for addr presenting cert, admitting requests through auth.
func New(addr string, cert CertificateSource, auth *Auth, opts ...Option) (*Server, error) {
	if cert == nil || auth == nil {
		return nil, errors.New("kubelet API server needs a serving certificate and authentication")
	}
	s := &Server{addr: addr, cert: cert, auth: auth, routes: newRouteTable(), log: logrus.NewEntry(logrus.StandardLogger()), limits: kubeletConnectionLimits()}
	for _, o := range opts {
		o(s)
	}
	return s, nil
}

// Handler is the authenticated, authorised router of every registered route, counted when a
// request recorder is set.
func (s *Server) Handler() http.Handler {
	h := s.auth.Wrap(s.routes.mux())
	if s.requests != nil {
		h = instrument(s.requests, s.routes.patterns(), h)
	}
	return h
}

// Run listens and serves until ctx ends.
func (s *Server) Run(ctx context.Context) error {
	l, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("kubelet API listener: %w", err)
	}
	return s.serveOn(ctx, l)
}

// serveOn serves TLS on l until ctx ends.
func (s *Server) serveOn(ctx context.Context, l net.Listener) error {
	srv := &http.Server{
		Handler:   s.Handler(),
		TLSConfig: tlsConfig(s.cert),
		// Handshake failures (a certificate not issued yet, scanners) are logged at debug level.
		ErrorLog: newStdLogger(s.log, logrus.DebugLevel),
	}
	s.limits.apply(srv)
	s.log.WithFields(logrus.Fields{"address": l.Addr().String(), "routes": s.routes.patterns()}).Info("kubelet API: serving")
	return serve(ctx, srv, func() error { return srv.ServeTLS(l, "", "") })
}

// serve runs srv until ctx ends, then shuts it down, giving open requests a few seconds.
func serve(ctx context.Context, srv *http.Server, run func() error) error {
	errc := make(chan error, 1)
	go func() { errc <- run() }()
	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	case <-ctx.Done():
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdownCtx)
		return nil
	}
}
