package identity

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/certificate"
	clocktesting "k8s.io/utils/clock/testing"
)

// stubManager is a certificate manager whose current certificate the test sets.
type stubManager struct {
	certificate.Manager
	mu      sync.Mutex
	cur     *tls.Certificate
	healthy bool
}

func (m *stubManager) Current() *tls.Certificate { m.mu.Lock(); defer m.mu.Unlock(); return m.cur }
func (m *stubManager) ServerHealthy() bool       { m.mu.Lock(); defer m.mu.Unlock(); return m.healthy }
func (m *stubManager) set(c *tls.Certificate)    { m.mu.Lock(); m.cur = c; m.mu.Unlock() }

// clientPair issues a key pair for cn, valid for lifetime from now.
func clientPair(t *testing.T, ca *testCA, cn string, lifetime time.Duration) *tls.Certificate {
	t.Helper()
	key, csrPEM := newKeyAndCSR(t, cn)
	certPEM := ca.sign(t, csrPEM, time.Now().Add(-time.Minute), lifetime)
	pair, err := tls.X509KeyPair(certPEM, key)
	if err != nil {
		t.Fatal(err)
	}
	return &pair
}

func TestRotatingTransportPresentsTheCurrentCertificateAndDropsOldConnections(t *testing.T) {
	ca := newTestCA(t)
	seen := make(chan string, 16)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cn := ""
		if len(r.TLS.PeerCertificates) > 0 {
			cn = r.TLS.PeerCertificates[0].Subject.CommonName
		}
		seen <- cn
	}))
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	srv.TLS = &tls.Config{ClientAuth: tls.VerifyClientCertIfGiven, ClientCAs: pool}
	srv.StartTLS()
	defer srv.Close()

	m := &stubManager{healthy: true}
	base := &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	rt, err := newRotatingTransport(base, m, clocktesting.NewFakeClock(time.Now()), logrus.NewEntry(logrus.New()))
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: rt.config.Transport, Timeout: 10 * time.Second}
	get := func() string {
		t.Helper()
		resp, err := client.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return <-seen
	}

	if cn := get(); cn != "" {
		t.Errorf("before any certificate the client presented %q", cn)
	}
	m.set(clientPair(t, ca, "system:node:one", time.Hour))
	rt.check()
	if cn := get(); cn != "system:node:one" {
		t.Errorf("presented %q, want system:node:one", cn)
	}
	// A kept-alive connection would go on with the old identity: the change closes it.
	m.set(clientPair(t, ca, "system:node:two", time.Hour))
	rt.check()
	if cn := get(); cn != "system:node:two" {
		t.Errorf("after rotation presented %q, want system:node:two", cn)
	}
}

func TestRotatingTransportGivesUpAfterTheGraceWithoutAValidCertificate(t *testing.T) {
	ca := newTestCA(t)
	clk := clocktesting.NewFakeClock(time.Now())
	m := &stubManager{healthy: true, cur: clientPair(t, ca, "system:node:one", time.Hour)}
	rt, err := newRotatingTransport(&rest.Config{Host: "https://127.0.0.1:1"}, m, clk, logrus.NewEntry(logrus.New()))
	if err != nil {
		t.Fatal(err)
	}
	clk.Step(58 * time.Minute)
	rt.check() // still valid
	// Expired, and the API server answers: after the grace, a failure, once.
	clk.Step(2 * time.Minute)
	rt.check()
	select {
	case err := <-rt.failed:
		t.Fatalf("failed at once: %v", err)
	default:
	}
	clk.Step(rotationGrace + time.Second)
	rt.check()
	select {
	case <-rt.failed:
	default:
		t.Fatal("no failure after the grace")
	}
	rt.check()
	select {
	case err := <-rt.failed:
		t.Fatalf("second failure: %v", err)
	default:
	}
}

func TestRotatingTransportWaitsWhileTheServerIsUnreachable(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	m := &stubManager{healthy: false}
	rt, err := newRotatingTransport(&rest.Config{Host: "https://127.0.0.1:1"}, m, clk, logrus.NewEntry(logrus.New()))
	if err != nil {
		t.Fatal(err)
	}
	clk.Step(rotationGrace + time.Minute)
	rt.check()
	select {
	case err := <-rt.failed:
		t.Fatalf("gave up while the API server was unreachable: %v", err)
	default:
	}
}
