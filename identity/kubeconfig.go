package identity

import (
	"fmt"
	"os"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"
)

// loadKubeconfig reads a kubeconfig file into a client configuration (its current context).
func loadKubeconfig(path string) (*rest.Config, error) {
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: path}, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	return cfg, nil
}

// kubeconfigStillValid reports whether the kubeconfig at path exists and carries a client
// certificate none of whose chain has expired at now; the kubelet then skips the bootstrap
// (bootstrap.go's isClientConfigStillValid). A file that cannot be read as such is not valid
// (it is replaced); only a failure to look at the path is an error.
func kubeconfigStillValid(path string, now time.Time) (bool, error) {
	if _, err := os.Stat(path); os.IsNotExist(err) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	cfg, err := loadKubeconfig(path)
	if err != nil {
		return false, nil
	}
	certPEM := cfg.CertData
	if len(certPEM) == 0 && cfg.CertFile != "" {
		if certPEM, err = os.ReadFile(cfg.CertFile); err != nil {
			return false, nil
		}
	}
	certs, err := certutil.ParseCertsPEM(certPEM)
	if err != nil || len(certs) == 0 {
		return false, nil
	}
	for _, c := range certs {
		if now.After(c.NotAfter) {
			return false, nil
		}
	}
	return true, nil
}

// writeNodeKubeconfig writes a kubeconfig for the bootstrap configuration's server and CA whose
// user is the key pair in pemPath (the certificate store's current file), as the kubelet does
// after bootstrapping: a restart finds it and needs no bootstrap token.
func writeNodeKubeconfig(bootstrap *rest.Config, path, pemPath string) error {
	cluster := &clientcmdapi.Cluster{
		Server:                bootstrap.Host,
		InsecureSkipTLSVerify: bootstrap.Insecure,
		TLSServerName:         bootstrap.ServerName,
	}
	if bootstrap.CAFile != "" {
		cluster.CertificateAuthority = bootstrap.CAFile
	} else {
		cluster.CertificateAuthorityData = bootstrap.CAData
	}
	kc := clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"default-cluster": cluster},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"default-auth": {ClientCertificate: pemPath, ClientKey: pemPath}},
		Contexts:       map[string]*clientcmdapi.Context{"default-context": {Cluster: "default-cluster", AuthInfo: "default-auth", Namespace: "default"}},
		CurrentContext: "default-context",
	}
	if err := clientcmd.WriteToFile(kc, path); err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	return nil
}
