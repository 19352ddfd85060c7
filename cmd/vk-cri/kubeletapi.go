package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"

	"github.com/sirupsen/logrus"
	"k8s.io/client-go/kubernetes"

	"github.com/vk-cri/vk-cri/server"
)

// authConfig is the kubelet API's authentication and authorisation from the flags.
func (o *options) authConfig() server.AuthConfig {
	return server.AuthConfig{
		ClientCAFile:      o.ClientCAFile,
		Anonymous:         o.AnonymousAuth,
		TokenWebhook:      o.AuthenticationTokenWebhook,
		TokenCacheTTL:     o.AuthenticationTokenCacheTTL,
		AuthorizationMode: o.AuthorizationMode,
		AuthorizedTTL:     o.AuthorizedCacheTTL,
		UnauthorizedTTL:   o.UnauthorizedCacheTTL,
	}
}

// servesKubeletAPI reports whether a serving certificate source was chosen.
func (o *options) servesKubeletAPI() bool {
	return o.TLSCertFile != "" || o.RotateServerCertificates || o.SelfSignedServingCert
}

// servingHostnames are the DNS names of the serving certificate: the node name and the host name.
func (o *options) servingHostnames() []string {
	names := []string{o.NodeName}
	if host, err := os.Hostname(); err == nil && host != o.NodeName {
		names = append(names, host)
	}
	return names
}

// servingCertificate is the kubelet API's certificate source the flags chose; stop ends its
// renewal.
func servingCertificate(ctx context.Context, o *options, client kubernetes.Interface, log *logrus.Entry) (server.CertificateSource, func(), error) {
	ip := net.ParseIP(o.NodeIP)
	if ip == nil {
		return nil, nil, fmt.Errorf("--node-ip %q is not an IP address", o.NodeIP)
	}
	switch {
	case o.TLSCertFile != "":
		c, err := server.CertificateFromFiles(o.TLSCertFile, o.TLSKeyFile)
		return c, func() {}, err
	case o.SelfSignedServingCert:
		log.Warn("kubelet API: self-signed serving certificate: the API server cannot verify this node")
		c, err := server.SelfSignedCertificate(o.NodeName, []net.IP{ip})
		return c, func() {}, err
	default:
		dir := o.certDir()
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, nil, fmt.Errorf("--cert-dir: %w", err)
		}
		c, err := server.NewCSRCertificate(ctx, server.ServingCSRConfig{
			NodeName:  o.NodeName,
			Hostnames: o.servingHostnames(),
			IPs:       []net.IP{ip},
			CertDir:   dir,
		}, client, log)
		if err != nil {
			return nil, nil, err
		}
		c.Start()
		return c, c.Stop, nil
	}
}

// handlerCapture keeps the handler virtual-kubelet attaches for the provider's routes (logs,
// exec, attach, port-forward, pods, stats), so that the kubelet API can route to it.
type handlerCapture struct{ handler http.Handler }

func (c *handlerCapture) Handle(_ string, h http.Handler) { c.handler = h }

// providerRoutes sends the kubelet's pod routes to virtual-kubelet's handler. Registrars listed
// after it in kubeletAPIRoutes replace any of these patterns.
func providerRoutes(h http.Handler) server.Registrar {
	return func(m server.Mux) {
		for _, pattern := range []string{
			"/pods", "/runningpods/",
			"/containerLogs/", "/exec/", "/attach/", "/portForward/", "/run/",
			"/stats/", "/metrics/resource",
		} {
			m.Handle(pattern, h)
		}
	}
}

// kubeletAPI is everything the kubelet API serves.
type kubeletAPI struct {
	providerHandler http.Handler
	// syncLoop answers the healthz "syncloop" check (nil: no such check).
	syncLoop func() error
	metrics  http.Handler
	// requests counts the kubelet API's requests (nil: not counted).
	requests server.RequestRecorder
	configz  map[string]any
	// systemLogDir is served at /logs/ ("": not served).
	systemLogDir string
	// extra are the route groups of other parts (streaming, stats ...). They are registered
	// last, so a pattern they share with providerRoutes is theirs.
	extra []server.Registrar
}

// healthChecks are /healthz's checks beyond ping and log, on both ports.
func (k kubeletAPI) healthChecks() []server.HealthChecker {
	if k.syncLoop == nil {
		return nil
	}
	return []server.HealthChecker{server.NamedCheck("syncloop", func(*http.Request) error { return k.syncLoop() })}
}

// routes lists the route groups in registration order: a pattern registered again later wins.
func (k kubeletAPI) routes() []server.Registrar {
	routes := []server.Registrar{
		providerRoutes(k.providerHandler),
		server.HealthzRoutes(k.healthChecks()...),
		server.MetricsRoute(k.metrics),
		server.ConfigzRoute(k.configz),
	}
	if k.systemLogDir != "" {
		routes = append(routes, server.SystemLogsRoute(k.systemLogDir))
	}
	return append(routes, k.extra...)
}

// runKubeletAPI serves the kubelet API (when a certificate source is configured) and the
// localhost healthz port (unless disabled) until ctx ends; an error ends vk-cri.
func runKubeletAPI(ctx context.Context, o *options, client kubernetes.Interface, api kubeletAPI, log *logrus.Entry) error {
	errc := make(chan error, 2)
	running := 0
	if o.HealthzPort > 0 {
		running++
		addr := net.JoinHostPort(o.HealthzBindAddress, strconv.Itoa(int(o.HealthzPort)))
		go func() { errc <- server.ServeHealthz(ctx, addr, log, api.healthChecks()...) }()
	}
	if o.servesKubeletAPI() {
		cert, stop, err := servingCertificate(ctx, o, client, log)
		if err != nil {
			return err
		}
		defer stop()
		auth, err := server.NewAuth(o.NodeName, o.authConfig(), client, log)
		if err != nil {
			return err
		}
		srv, err := server.New(net.JoinHostPort(o.Address, strconv.Itoa(int(o.Port))), cert, auth,
			server.WithLogger(log), server.WithRoutes(api.routes()...), server.WithRequestMetrics(api.requests))
		if err != nil {
			return err
		}
		running++
		go func() { errc <- srv.Run(ctx) }()
	} else {
		log.Warn("no --tls-cert-file, --rotate-server-certificates or --self-signed-serving-cert: the kubelet API (logs, exec, metrics) is not served")
	}
	for ; running > 0; running-- {
		if err := <-errc; err != nil {
			return err
		}
	}
	return nil
}
