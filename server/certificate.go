package server

import (
	"context"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"net"
	"sort"

	"github.com/sirupsen/logrus"
	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/certificate"
)

// ServingCSRConfig is what a kubelet-serving certificate is requested for.
type ServingCSRConfig struct {
	NodeName string
	// Hostnames and IPs are the certificate's SANs: the node's addresses and host name.
	Hostnames []string
	IPs       []net.IP
	// CertDir keeps the issued key pair (kubelet-server-current.pem), reused after a restart.
	CertDir string
}

// servingCSRTemplate is the request the kubernetes.io/kubelet-serving signer accepts: the
// node's identity as subject, its addresses as SANs.
func servingCSRTemplate(cfg ServingCSRConfig) *x509.CertificateRequest {
	hosts := append([]string(nil), cfg.Hostnames...)
	sort.Strings(hosts)
	return &x509.CertificateRequest{
		Subject: pkix.Name{
			CommonName:   "system:node:" + cfg.NodeName,
			Organization: []string{"system:nodes"},
		},
		DNSNames:    hosts,
		IPAddresses: cfg.IPs,
	}
}

// servingUsages are the key usages the signer allows for the key's type.
func servingUsages(key any) []certificatesv1.KeyUsage {
	if _, isRSA := key.(*rsa.PrivateKey); isRSA {
		return []certificatesv1.KeyUsage{certificatesv1.UsageKeyEncipherment, certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth}
	}
	return []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth}
}

// CSRCertificate is a serving certificate requested through the certificates API and renewed
// before it expires (client-go's certificate manager: a new CSR once 70-90% of the lifetime has
// passed). Someone must approve the requests, as for the kubelet.
type CSRCertificate struct {
	manager certificate.Manager
}

// NewCSRCertificate prepares the manager; Start begins requesting.
func NewCSRCertificate(ctx context.Context, cfg ServingCSRConfig, client kubernetes.Interface, log *logrus.Entry) (*CSRCertificate, error) {
	store, err := certificate.NewFileStore("kubelet-server", cfg.CertDir, cfg.CertDir, "", "")
	if err != nil {
		return nil, fmt.Errorf("serving certificate store %s: %w", cfg.CertDir, err)
	}
	template := servingCSRTemplate(cfg)
	m, err := certificate.NewManager(&certificate.Config{
		ClientsetFn:      func(*tls.Certificate) (kubernetes.Interface, error) { return client, nil },
		GetTemplate:      func() *x509.CertificateRequest { return template },
		SignerName:       certificatesv1.KubeletServingSignerName,
		GetUsages:        servingUsages,
		CertificateStore: store,
		Name:             "kubelet-serving",
		Ctx:              &ctx,
	})
	if err != nil {
		return nil, fmt.Errorf("serving certificate manager: %w", err)
	}
	log.WithFields(logrus.Fields{"dir": cfg.CertDir, "subject": template.Subject.String(), "dns": template.DNSNames, "ips": template.IPAddresses}).Info("kubelet API: serving certificate from the certificates API (signer kubernetes.io/kubelet-serving)")
	return &CSRCertificate{manager: m}, nil
}

func (c *CSRCertificate) Current() *tls.Certificate { return c.manager.Current() }

// Start requests a certificate if none is stored or it no longer fits, and keeps it renewed until
// Stop.
func (c *CSRCertificate) Start() { c.manager.Start() }

func (c *CSRCertificate) Stop() { c.manager.Stop() }
