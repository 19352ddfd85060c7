package identity

import (
	"context"
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

func testOptions(t *testing.T, api *fakeAPI, ca *testCA) Options {
	dir := t.TempDir()
	return Options{
		NodeName:            "node-a",
		Kubeconfig:          filepath.Join(dir, "kubelet.kubeconfig"),
		BootstrapKubeconfig: writeBootstrapKubeconfig(t, dir, ca),
		CertDir:             filepath.Join(dir, "pki"),
		Log:                 logrus.NewEntry(logrus.New()),
		newClient:           api.newClient,
	}
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// checkRequest: the CSR asks the kubelet client signer for system:node:<name> in system:nodes
// with client usages only.
func checkRequest(t *testing.T, csr *certificatesv1.CertificateSigningRequest, node string) {
	t.Helper()
	if csr.Spec.SignerName != certificatesv1.KubeAPIServerClientKubeletSignerName {
		t.Errorf("CSR %s: signer %q", csr.Name, csr.Spec.SignerName)
	}
	for _, u := range csr.Spec.Usages {
		if u != certificatesv1.UsageDigitalSignature && u != certificatesv1.UsageClientAuth {
			t.Errorf("CSR %s: usage %q", csr.Name, u)
		}
	}
	req, err := parseCSRPEM(csr.Spec.Request)
	if err != nil {
		t.Fatal(err)
	}
	if req.Subject.CommonName != "system:node:"+node || strings.Join(req.Subject.Organization, ",") != "system:nodes" {
		t.Errorf("CSR %s: subject %s", csr.Name, req.Subject)
	}
	if len(req.DNSNames)+len(req.IPAddresses)+len(req.EmailAddresses)+len(req.URIs) > 0 {
		t.Errorf("CSR %s has SANs", csr.Name)
	}
}

func TestBootstrapOnceStoresTheCertificateAndReusesItAfterARestart(t *testing.T) {
	api, ca := newFakeAPI(t), newTestCA(t)
	api.startSigner(t, ca, time.Hour)
	o := testOptions(t, api, ca)

	creds, err := Load(ctxFor(t, 30*time.Second), o)
	if err != nil {
		t.Fatal(err)
	}
	reqs := api.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d CSRs, want 1", len(reqs))
	}
	checkRequest(t, reqs[0], "node-a")
	// Named after what it asks for, so that a retry finds it.
	if !strings.HasPrefix(reqs[0].Name, "node-csr-") {
		t.Errorf("CSR name %q", reqs[0].Name)
	}
	if got := api.configs(); len(got) != 1 || got[0].BearerToken != "abcdef.0123456789abcdef" {
		t.Errorf("the request was not made with the bootstrap token: %+v", got)
	}
	current := filepath.Join(o.CertDir, "kubelet-client-current.pem")
	if creds.Config.CertFile != current || creds.Config.KeyFile != current || creds.Config.BearerToken != "" {
		t.Errorf("node config: cert %q key %q token %q, want the store's current pair only", creds.Config.CertFile, creds.Config.KeyFile, creds.Config.BearerToken)
	}
	if leaf := leafOf(t, current); leaf.Subject.CommonName != "system:node:node-a" {
		t.Errorf("stored certificate subject %s", leaf.Subject)
	}
	if _, err := os.Stat(filepath.Join(o.CertDir, pendingKeyFile)); !os.IsNotExist(err) {
		t.Errorf("pending key left behind: %v", err)
	}

	// A restart: the written kubeconfig is valid, nothing is requested.
	again, err := Load(ctxFor(t, 10*time.Second), o)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(api.requests()); n != 1 {
		t.Errorf("restart made %d CSRs in all, want the first one only", n)
	}
	if again.Config.CertFile != current {
		t.Errorf("restart uses %q", again.Config.CertFile)
	}
}

func TestBootstrapOnceRequestsAgainWhenTheCertificateExpired(t *testing.T) {
	api, ca := newFakeAPI(t), newTestCA(t)
	api.startSigner(t, ca, time.Hour)
	o := testOptions(t, api, ca)
	if _, err := Load(ctxFor(t, 30*time.Second), o); err != nil {
		t.Fatal(err)
	}
	first := leafOf(t, filepath.Join(o.CertDir, "kubelet-client-current.pem"))

	// kube-controller-manager's csrcleaner deletes issued requests after an hour, long before a
	// node certificate expires.
	for _, r := range api.requests() {
		if err := api.CertificatesV1().CertificateSigningRequests().Delete(context.Background(), r.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	o.clock = clocktesting.NewFakeClock(first.NotAfter.Add(time.Minute))
	api.setLifetime(48 * time.Hour)
	if _, err := Load(ctxFor(t, 30*time.Second), o); err != nil {
		t.Fatal(err)
	}
	if n := len(api.requests()); n != 2 {
		t.Fatalf("%d CSRs, want a second one for the expired certificate", n)
	}
	second := leafOf(t, filepath.Join(o.CertDir, "kubelet-client-current.pem"))
	if second.SerialNumber.Cmp(first.SerialNumber) == 0 {
		t.Errorf("the expired certificate is still the current one")
	}
	// The key of the stored certificate is reused for the renewal, as the kubelet does.
	if !second.PublicKey.(interface{ Equal(crypto.PublicKey) bool }).Equal(first.PublicKey) {
		t.Errorf("renewal made a new key")
	}
}

func TestBootstrapOnceFailsClearlyWhenTheRequestIsDenied(t *testing.T) {
	api, ca := newFakeAPI(t), newTestCA(t)
	o := testOptions(t, api, ca)
	ctx := ctxFor(t, 30*time.Second)
	go func() {
		w, err := api.CertificatesV1().CertificateSigningRequests().Watch(ctx, metav1.ListOptions{})
		if err != nil {
			return
		}
		for e := range w.ResultChan() {
			csr, ok := e.Object.(*certificatesv1.CertificateSigningRequest)
			if !ok || len(csr.Status.Conditions) > 0 {
				continue
			}
			csr = csr.DeepCopy()
			csr.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateDenied, Status: "True", Reason: "NotAllowed"}}
			_, _ = api.CertificatesV1().CertificateSigningRequests().UpdateStatus(ctx, csr, metav1.UpdateOptions{})
			return
		}
	}()
	_, err := Load(ctx, o)
	if err == nil || !strings.Contains(err.Error(), "denied") {
		t.Fatalf("err = %v, want the denial", err)
	}
	if _, err := os.Stat(o.Kubeconfig); !os.IsNotExist(err) {
		t.Errorf("a kubeconfig was written without a certificate: %v", err)
	}
}

func TestRotationRequestsWithTheBootstrapTokenFirstThenWithTheNodeCertificate(t *testing.T) {
	api, ca := newFakeAPI(t), newTestCA(t)
	// Short-lived certificates: the manager renews at 70-90% of the lifetime.
	api.startSigner(t, ca, 3*time.Second)
	o := testOptions(t, api, ca)
	o.Rotate = true
	o.checkPeriod = 50 * time.Millisecond

	creds, err := Load(ctxFor(t, 30*time.Second), o)
	if err != nil {
		t.Fatal(err)
	}
	defer creds.Stop()
	if creds.Config.Transport == nil || creds.Config.CertFile != "" || len(creds.Config.CertData) > 0 || creds.Config.BearerToken != "" {
		t.Fatalf("node config must carry its certificate in the rotating transport only: %+v", creds.Config)
	}
	current := filepath.Join(o.CertDir, "kubelet-client-current.pem")
	first := leafOf(t, current)
	if first.Subject.CommonName != "system:node:node-a" {
		t.Fatalf("subject %s", first.Subject)
	}
	if _, err := os.Stat(o.Kubeconfig); err != nil {
		t.Fatalf("no kubeconfig written: %v", err)
	}

	deadline := time.Now().Add(20 * time.Second)
	for len(api.requests()) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("no renewal within 20s of a 3s certificate (%d CSRs)", len(api.requests()))
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, r := range api.requests() {
		checkRequest(t, r, "node-a")
	}
	for time.Now().Before(deadline) && leafOf(t, current).SerialNumber.Cmp(first.SerialNumber) == 0 {
		time.Sleep(20 * time.Millisecond)
	}
	if leafOf(t, current).SerialNumber.Cmp(first.SerialNumber) == 0 {
		t.Fatalf("the renewed certificate was not stored")
	}
	cfgs := api.configs()
	if len(cfgs) < 2 || cfgs[0].BearerToken == "" || cfgs[1].BearerToken != "" || cfgs[1].CertFile != current {
		t.Errorf("want the first request with the bootstrap token, the renewal with %s; got %d configs", current, len(cfgs))
	}

}

func TestRotationRestartReusesTheStoredCertificateWithoutTheBootstrapToken(t *testing.T) {
	api, ca := newFakeAPI(t), newTestCA(t)
	api.startSigner(t, ca, time.Hour)
	o := testOptions(t, api, ca)
	o.Rotate = true
	creds, err := Load(ctxFor(t, 30*time.Second), o)
	if err != nil {
		t.Fatal(err)
	}
	creds.Stop()

	o.BootstrapKubeconfig = filepath.Join(t.TempDir(), "gone")
	again, err := Load(ctxFor(t, 10*time.Second), o)
	if err != nil {
		t.Fatalf("restart: %v", err)
	}
	defer again.Stop()
	if n := len(api.requests()); n != 1 {
		t.Errorf("%d CSRs after the restart, want the first only", n)
	}
}

func parseCSRPEM(data []byte) (*x509.CertificateRequest, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("no PEM block")
	}
	return x509.ParseCertificateRequest(block.Bytes)
}
