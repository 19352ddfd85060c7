package identity

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"
	certutil "k8s.io/client-go/util/cert"
)

// testCA signs what the fake signer approves.
type testCA struct {
	cert *x509.Certificate
	key  crypto.Signer
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: "test-ca"}, key)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, key: key}
}

// sign issues a client certificate for the request's subject, valid from notBefore for lifetime.
func (ca *testCA) sign(t *testing.T, csrPEM []byte, notBefore time.Time, lifetime time.Duration) []byte {
	t.Helper()
	block, _ := pem.Decode(csrPEM)
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      req.Subject,
		NotBefore:    notBefore,
		NotAfter:     notBefore.Add(lifetime),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, req.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// fakeAPI is a fake clientset whose CSRs get UIDs and whose list and watch honour a
// metadata.name field selector, as the API server's do; its signer approves and signs every
// request (kube-controller-manager's csrapproving and csrsigning).
type fakeAPI struct {
	*fake.Clientset
	mu      sync.Mutex
	created []*certificatesv1.CertificateSigningRequest
	// lifetime is the validity of the certificates the signer issues.
	lifetime time.Duration
	// requestedWith is the client configuration each clientset was built from, in order.
	requestedWith []*rest.Config
}

var csrResource = certificatesv1.SchemeGroupVersion.WithResource("certificatesigningrequests")

func newFakeAPI(t *testing.T) *fakeAPI {
	f := &fakeAPI{Clientset: fake.NewClientset()}
	tracker := f.Tracker()
	uid := 0
	f.PrependReactor("create", "certificatesigningrequests", func(a clienttesting.Action) (bool, runtime.Object, error) {
		csr := a.(clienttesting.CreateAction).GetObject().(*certificatesv1.CertificateSigningRequest)
		f.mu.Lock()
		uid++
		csr.UID = types.UID(fmt.Sprintf("uid-%d", uid))
		if csr.Name == "" && csr.GenerateName != "" {
			csr.Name = fmt.Sprintf("%s%d", csr.GenerateName, uid) // the API server's generated name
		}
		f.created = append(f.created, csr.DeepCopy())
		f.mu.Unlock()
		return false, nil, nil
	})
	f.PrependReactor("list", "certificatesigningrequests", func(a clienttesting.Action) (bool, runtime.Object, error) {
		obj, err := tracker.List(csrResource, certificatesv1.SchemeGroupVersion.WithKind("CertificateSigningRequest"), "")
		if err != nil {
			return true, nil, err
		}
		list := obj.(*certificatesv1.CertificateSigningRequestList)
		sel := a.(clienttesting.ListAction).GetListRestrictions().Fields
		var kept []certificatesv1.CertificateSigningRequest
		for _, c := range list.Items {
			if sel.Matches(fields.Set{"metadata.name": c.Name}) {
				kept = append(kept, c)
			}
		}
		list.Items = kept
		return true, list, nil
	})
	f.PrependWatchReactor("certificatesigningrequests", func(a clienttesting.Action) (bool, watch.Interface, error) {
		w, err := tracker.Watch(csrResource, "", metav1.ListOptions{})
		if err != nil {
			return true, nil, err
		}
		sel := a.(clienttesting.WatchAction).GetWatchRestrictions().Fields
		return true, watch.Filter(w, func(e watch.Event) (watch.Event, bool) {
			c, ok := e.Object.(*certificatesv1.CertificateSigningRequest)
			return e, ok && sel.Matches(fields.Set{"metadata.name": c.Name})
		}), nil
	})
	return f
}

func (f *fakeAPI) newClient(c *rest.Config) (kubernetes.Interface, error) {
	f.mu.Lock()
	f.requestedWith = append(f.requestedWith, rest.CopyConfig(c))
	f.mu.Unlock()
	return f, nil
}

func (f *fakeAPI) setLifetime(d time.Duration) {
	f.mu.Lock()
	f.lifetime = d
	f.mu.Unlock()
}

func (f *fakeAPI) issuedLifetime() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lifetime
}

func (f *fakeAPI) requests() []*certificatesv1.CertificateSigningRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*certificatesv1.CertificateSigningRequest(nil), f.created...)
}

func (f *fakeAPI) configs() []*rest.Config {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*rest.Config(nil), f.requestedWith...)
}

// startSigner approves and signs every pending request until the test ends: certificates valid
// from now for lifetime.
func (f *fakeAPI) startSigner(t *testing.T, ca *testCA, lifetime time.Duration) {
	f.setLifetime(lifetime)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w, err := f.CertificatesV1().CertificateSigningRequests().Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer w.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case e, ok := <-w.ResultChan():
				if !ok {
					return
				}
				csr, isCSR := e.Object.(*certificatesv1.CertificateSigningRequest)
				if !isCSR || e.Type != watch.Added || len(csr.Status.Conditions) > 0 {
					continue
				}
				csr = csr.DeepCopy()
				csr.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{
					Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "AutoApproved",
				}}
				csr.Status.Certificate = ca.sign(t, csr.Spec.Request, time.Now(), f.issuedLifetime())
				if _, err := f.CertificatesV1().CertificateSigningRequests().UpdateStatus(ctx, csr, metav1.UpdateOptions{}); err != nil && ctx.Err() == nil {
					t.Errorf("signer: %v", err)
				}
			}
		}
	}()
}

// writeBootstrapKubeconfig writes a bootstrap kubeconfig with a token (the fake ignores both).
func writeBootstrapKubeconfig(t *testing.T, dir string, ca *testCA) string {
	t.Helper()
	p := filepath.Join(dir, "bootstrap.kubeconfig")
	caPEM := base64PEM(ca.cert)
	content := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: https://127.0.0.1:1
    certificate-authority-data: %s
users:
- name: u
  user:
    token: abcdef.0123456789abcdef
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
`, caPEM)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func base64PEM(c *x509.Certificate) string {
	return base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw}))
}

// leafOf parses the first certificate of a PEM file.
func leafOf(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	certs, err := certutil.ParseCertsPEM(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return certs[0]
}

// newKeyAndCSR makes a P-256 key (PEM) and a CSR for cn in system:nodes.
func newKeyAndCSR(t *testing.T, cn string) (keyPEM, csrPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	req, err := certutil.MakeCSRFromTemplate(key, &x509.CertificateRequest{Subject: nodeSubject(strings.TrimPrefix(cn, "system:node:"))})
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), req
}
