package identity

import (
	"context"
	"crypto"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/sirupsen/logrus"
	"k8s.io/client-go/kubernetes"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/certificate"
	"k8s.io/client-go/util/certificate/csr"
	"k8s.io/client-go/util/keyutil"
)

// pendingKeyFile keeps the private key of a request not yet signed, so that a restart asks again
// with the same key (and finds the same CSR by name). The store's current file is a symlink it
// manages, so the key cannot wait there.
const pendingKeyFile = "kubelet-client.key.tmp"

// bootstrapOnce is the kubelet's LoadClientCert: nothing to do while the kubeconfig's certificate
// is valid; otherwise one certificate is requested with the bootstrap credentials, stored, and
// the kubeconfig written to point at it.
func bootstrapOnce(ctx context.Context, o Options) error {
	valid, err := kubeconfigStillValid(o.Kubeconfig, o.clock.Now())
	if err != nil {
		return err
	}
	if valid {
		o.Log.WithField("kubeconfig", o.Kubeconfig).Info("identity: the kubeconfig's client certificate is still valid: no bootstrap")
		return nil
	}
	bootstrapConfig, err := loadKubeconfig(o.BootstrapKubeconfig)
	if err != nil {
		return fmt.Errorf("--bootstrap-kubeconfig: %w", err)
	}
	client, err := o.newClient(bootstrapConfig)
	if err != nil {
		return fmt.Errorf("bootstrap client: %w", err)
	}
	store, err := newStore(o.CertDir)
	if err != nil {
		return err
	}
	keyPEM, err := bootstrapKey(store, filepath.Join(o.CertDir, pendingKeyFile))
	if err != nil {
		return err
	}
	o.Log.WithFields(logrus.Fields{"kubeconfig": o.Kubeconfig, "certDir": o.CertDir}).Info("identity: requesting a node client certificate with the bootstrap credentials")
	certPEM, err := requestClientCertificate(ctx, client, keyPEM, o.NodeName, o.clock.Now())
	if err != nil {
		return err
	}
	if _, err := store.Update(certPEM, keyPEM); err != nil {
		return fmt.Errorf("storing the node client certificate: %w", err)
	}
	if err := os.Remove(filepath.Join(o.CertDir, pendingKeyFile)); err != nil && !os.IsNotExist(err) {
		o.Log.WithError(err).Warn("identity: removing the pending key")
	}
	return writeNodeKubeconfig(bootstrapConfig, o.Kubeconfig, store.CurrentPath())
}

// bootstrapKey is the key of the stored certificate (an expired one: the request renews it), else
// the pending key, made if missing.
func bootstrapKey(store certificate.Store, pendingPath string) ([]byte, error) {
	if cert, err := store.Current(); err == nil && cert.PrivateKey != nil {
		if pem, err := keyutil.MarshalPrivateKeyToPEM(cert.PrivateKey); err == nil {
			return pem, nil
		}
	}
	pem, _, err := keyutil.LoadOrGenerateKeyFile(pendingPath)
	if err != nil {
		return nil, fmt.Errorf("node client key %s: %w", pendingPath, err)
	}
	return pem, nil
}

// requestClientCertificate makes the CSR for the node's client certificate and waits until it is
// approved and signed (csr.RequestCertificateWithContext finds an earlier request of the same
// name and key instead of failing).
func requestClientCertificate(ctx context.Context, client kubernetes.Interface, keyPEM []byte, nodeName string, now time.Time) ([]byte, error) {
	key, err := keyutil.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("node client key: %w", err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("node client key of type %T cannot sign", key)
	}
	template := clientTemplate(nodeName)
	csrPEM, err := certutil.MakeCSRFromTemplate(signer, template)
	if err != nil {
		return nil, fmt.Errorf("making the CSR: %w", err)
	}
	usages := clientUsages(signer)
	name, err := requestName(signer.Public(), template.Subject, usages)
	if err != nil {
		return nil, err
	}
	reqName, reqUID, err := csr.RequestCertificateWithContext(ctx, client, csrPEM, name, "kubernetes.io/kube-apiserver-client-kubelet", nil, usages, signer)
	if err != nil {
		return nil, fmt.Errorf("requesting the node client certificate: %w", err)
	}
	wctx, cancel := context.WithTimeout(ctx, bootstrapTimeout)
	defer cancel()
	certPEM, err := csr.WaitForCertificate(wctx, client, reqName, reqUID)
	if err != nil {
		return nil, fmt.Errorf("waiting for CSR %s to be approved and signed: %w", reqName, err)
	}
	leaf, err := parseLeaf(certPEM)
	if err != nil {
		return nil, fmt.Errorf("CSR %s: %w", reqName, err)
	}
	if now.After(leaf.NotAfter) {
		// An old request of the same key and subject, not yet cleaned up.
		return nil, fmt.Errorf("CSR %s holds a certificate that expired at %s: delete the request to have a new one issued", reqName, leaf.NotAfter.Format(time.RFC3339))
	}
	return certPEM, nil
}

func parseLeaf(certPEM []byte) (*x509.Certificate, error) {
	certs, err := certutil.ParseCertsPEM(certPEM)
	if err != nil {
		return nil, fmt.Errorf("issued certificate: %w", err)
	}
	return certs[0], nil
}
