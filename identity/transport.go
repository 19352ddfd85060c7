package identity

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/certificate"
	"k8s.io/client-go/util/connrotation"
	"k8s.io/utils/clock"
)

// rotatingTransport presents the certificate manager's current certificate on every TLS
// handshake and closes its connections when the certificate changes, so that no connection goes
// on with the old identity (the kubelet's pkg/kubelet/certificate/transport.go).
type rotatingTransport struct {
	config  *rest.Config
	manager certificate.Manager
	dialer  *connrotation.Dialer
	clock   clock.Clock
	log     *logrus.Entry

	mu        sync.Mutex
	last      *tls.Certificate
	lastValid time.Time
	failed    chan error
	reported  bool
}

// newRotatingTransport returns a copy of base whose transport takes its client certificate from
// m; base's own TLS client credentials are dropped, its CA and server name kept.
func newRotatingTransport(base *rest.Config, m certificate.Manager, clk clock.Clock, log *logrus.Entry) (*rotatingTransport, error) {
	anon := rest.AnonymousClientConfig(base)
	tlsConfig, err := rest.TLSConfigFor(anon)
	if err != nil {
		return nil, fmt.Errorf("TLS configuration of %s: %w", base.Host, err)
	}
	if tlsConfig == nil {
		tlsConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	tlsConfig.Certificates = nil
	tlsConfig.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
		if c := m.Current(); c != nil {
			return c, nil
		}
		return &tls.Certificate{}, nil // no certificate yet: the handshake goes on without one
	}
	d := connrotation.NewDialer((&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext)
	cfg := rest.CopyConfig(anon)
	cfg.Transport = utilnet.SetTransportDefaults(&http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		TLSHandshakeTimeout: 10 * time.Second,
		TLSClientConfig:     tlsConfig,
		MaxIdleConnsPerHost: 25,
		DialContext:         d.DialContext,
	})
	// The transport carries the TLS settings; client-go refuses them beside a custom transport.
	cfg.TLSClientConfig = rest.TLSClientConfig{}
	return &rotatingTransport{
		config: cfg, manager: m, dialer: d, clock: clk, log: log,
		last: m.Current(), lastValid: clk.Now(), failed: make(chan error, 1),
	}, nil
}

// check closes every connection once the certificate changed, and reports a failure when no
// valid certificate has been at hand for rotationGrace while the API server answers.
func (t *rotatingTransport) check() {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.clock.Now()
	cur := t.manager.Current()
	if cur != nil && cur.Leaf != nil && now.Before(cur.Leaf.NotAfter) {
		t.lastValid = now
	} else if now.Sub(t.lastValid) > rotationGrace && t.manager.ServerHealthy() && !t.reported {
		t.reported = true
		t.failed <- fmt.Errorf("no valid node client certificate since %s and none could be obtained (restart to bootstrap again)", t.lastValid.Format(time.RFC3339))
	}
	if cur == nil || cur == t.last {
		return
	}
	t.last = cur
	if cur.Leaf != nil {
		t.log.WithFields(logrus.Fields{"subject": cur.Leaf.Subject.String(), "notAfter": cur.Leaf.NotAfter}).Info("identity: client certificate rotated; closing the API connections")
	}
	t.dialer.CloseAll()
}
