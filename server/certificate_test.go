package server

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"net"
	"reflect"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
)

func TestServingCSRTemplate(t *testing.T) {
	tpl := servingCSRTemplate(ServingCSRConfig{NodeName: "node-1", Hostnames: []string{"vm", "node-1"}, IPs: []net.IP{net.ParseIP("10.0.0.5")}})
	if tpl.Subject.CommonName != "system:node:node-1" || !reflect.DeepEqual(tpl.Subject.Organization, []string{"system:nodes"}) {
		t.Errorf("subject %v", tpl.Subject)
	}
	if !reflect.DeepEqual(tpl.DNSNames, []string{"node-1", "vm"}) || len(tpl.IPAddresses) != 1 || !tpl.IPAddresses[0].Equal(net.ParseIP("10.0.0.5")) {
		t.Errorf("SANs %v %v", tpl.DNSNames, tpl.IPAddresses)
	}
	if len(tpl.EmailAddresses) != 0 || len(tpl.URIs) != 0 {
		t.Error("the kubelet-serving signer refuses email and URI SANs")
	}
}

func TestServingUsagesFollowTheKeyType(t *testing.T) {
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	if got := servingUsages(ec); !reflect.DeepEqual(got, []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth}) {
		t.Errorf("ECDSA usages %v", got)
	}
	if got := servingUsages(rsaKey); !reflect.DeepEqual(got, []certificatesv1.KeyUsage{certificatesv1.UsageKeyEncipherment, certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth}) {
		t.Errorf("RSA usages %v", got)
	}
}

func TestTLSConfigWaitsForACertificate(t *testing.T) {
	var src staticCertificate
	cfg := tlsConfig(src)
	if _, err := cfg.GetCertificate(nil); err != errNoCertificate {
		t.Errorf("no certificate yet: %v", err)
	}
	self, err := SelfSignedCertificate("node-1", []net.IP{net.ParseIP("10.0.0.5")})
	if err != nil {
		t.Fatal(err)
	}
	if c, err := tlsConfig(self).GetCertificate(nil); err != nil || c == nil {
		t.Errorf("self-signed: %v", err)
	}
}
