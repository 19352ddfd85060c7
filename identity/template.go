package identity

import (
	"crypto"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/client-go/util/certificate"
)

// nodeSubject is the subject the Node authorizer reads a node's identity from: user
// system:node:<name>, group system:nodes.
func nodeSubject(nodeName string) pkix.Name {
	return pkix.Name{CommonName: "system:node:" + nodeName, Organization: []string{"system:nodes"}}
}

// clientTemplate is the request for the node's client certificate (no SANs: the
// kube-apiserver-client-kubelet signer refuses them, as the CSR approver's recognizer does).
func clientTemplate(nodeName string) *x509.CertificateRequest {
	return &x509.CertificateRequest{Subject: nodeSubject(nodeName)}
}

// clientUsages are the key usages the kube-apiserver-client-kubelet signer accepts for the key's
// type (client-go's kubelet client defaults).
func clientUsages(key any) []certificatesv1.KeyUsage {
	return certificate.DefaultKubeletClientGetUsages(key)
}

// requestName names the CSR after what it asks for (public key, subject, usages), as the
// kubelet names its bootstrap requests: a retry after a crash finds its earlier request instead of
// making another one.
func requestName(pub crypto.PublicKey, subject pkix.Name, usages []certificatesv1.KeyUsage) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", fmt.Errorf("encoding the public key: %w", err)
	}
	sorted := make([]string, 0, len(usages))
	for _, u := range usages {
		sorted = append(sorted, string(u))
	}
	sort.Strings(sorted)
	orgs := append([]string(nil), subject.Organization...)
	sort.Strings(orgs)
	h := sha256.New()
	for _, part := range [][]byte{der, []byte(subject.CommonName), []byte(strings.Join(orgs, ",")), []byte(strings.Join(sorted, ","))} {
		// Length-prefixed, so that no two different requests hash the same bytes.
		fmt.Fprintf(h, "%d:", len(part))
		h.Write(part)
	}
	return "node-csr-" + hex.EncodeToString(h.Sum(nil))[:48], nil
}
