package server

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"

	certutil "k8s.io/client-go/util/cert"
)

// CertificateSource gives the serving certificate presented in each TLS handshake; a rotating
// source (the CSR manager) may return a new one at any time, or none while it waits.
type CertificateSource interface {
	Current() *tls.Certificate
}

type staticCertificate struct{ cert *tls.Certificate }

func (s staticCertificate) Current() *tls.Certificate { return s.cert }

// CertificateFromFiles serves the key pair in certFile and keyFile (PEM).
func CertificateFromFiles(certFile, keyFile string) (CertificateSource, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("serving certificate %s: %w", certFile, err)
	}
	return staticCertificate{&cert}, nil
}

// SelfSignedCertificate makes a certificate signed by its own throwaway CA for host and ips, as
// the kubelet does when it has no certificate. Nothing can verify it: only on explicit request.
func SelfSignedCertificate(host string, ips []net.IP) (CertificateSource, error) {
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey(host, ips, nil)
	if err != nil {
		return nil, fmt.Errorf("self-signed serving certificate: %w", err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("self-signed serving certificate: %w", err)
	}
	return staticCertificate{&cert}, nil
}

// errNoCertificate is what a handshake fails with while a requested certificate is not issued.
var errNoCertificate = errors.New("no serving certificate available yet (certificate signing request not approved or not signed)")

// tlsConfig serves the source's current certificate and asks clients for a certificate without
// requiring one: client certificates are verified by the x509 authenticator, and callers may
// present a bearer token instead.
func tlsConfig(source CertificateSource) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		ClientAuth: tls.RequestClientCert,
		NextProtos: []string{"h2", "http/1.1"},
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			if c := source.Current(); c != nil {
				return c, nil
			}
			return nil, errNoCertificate
		},
	}
}
