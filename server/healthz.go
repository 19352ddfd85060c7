package server

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/sirupsen/logrus"
	"k8s.io/apiserver/pkg/server/healthz"
)

// HealthChecker is one named check of /healthz (k8s.io/apiserver's healthz checks).
type HealthChecker = healthz.HealthChecker

// NamedCheck makes a check from a function.
func NamedCheck(name string, check func(*http.Request) error) HealthChecker {
	return healthz.NamedCheck(name, check)
}

// healthChecks are the kubelet's always-present checks followed by the caller's.
func healthChecks(checks []HealthChecker) []HealthChecker {
	return append([]HealthChecker{healthz.PingHealthz, healthz.LogHealthz}, checks...)
}

// HealthzRoutes registers /healthz and /healthz/<check> on the kubelet API.
func HealthzRoutes(checks ...HealthChecker) Registrar {
	return func(m Mux) { healthz.InstallHandler(m, healthChecks(checks)...) }
}

// ServeHealthz serves /healthz alone over plain HTTP on addr without authentication, like the
// kubelet's healthz port; addr should be a loopback address. It returns when ctx ends.
func ServeHealthz(ctx context.Context, addr string, log *logrus.Entry, checks ...HealthChecker) error {
	mux := http.NewServeMux()
	healthz.InstallHandler(mux, healthChecks(checks)...)
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("healthz listener: %w", err)
	}
	srv := &http.Server{Handler: mux, ErrorLog: newStdLogger(log, logrus.DebugLevel)}
	// The kubelet's healthz port has no limits at all; vk-cri's gets the API server's, with a
	// shorter wait for headers (a health check sends a few bytes).
	limits := kubeletConnectionLimits()
	limits.ReadHeader = 10 * time.Second
	limits.apply(srv)
	log.WithField("address", addr).Info("healthz: serving")
	return serve(ctx, srv, func() error { return srv.Serve(l) })
}
