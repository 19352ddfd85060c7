package main

import (
	"context"
	"fmt"

	"github.com/sirupsen/logrus"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/vk-cri/vk-cri/identity"
)

// apiCredentials is the client configuration vk-cri talks to the API server with: with
// --bootstrap-kubeconfig the node's own identity (system:node:<nodename>, obtained by TLS
// bootstrap and, with --rotate-certificates, renewed), else --kubeconfig's, $KUBECONFIG's or the
// in-cluster one as given. failed reports that the node's certificate is lost for good; stop ends
// its renewal.
func apiCredentials(ctx context.Context, o *options, log *logrus.Entry) (cfg *rest.Config, failed <-chan error, stop func(), err error) {
	if o.BootstrapKubeconfig == "" {
		cfg, err = restConfig(o.Kubeconfig)
		return cfg, nil, func() {}, err
	}
	creds, err := identity.Load(ctx, identity.Options{
		NodeName:            o.NodeName,
		Kubeconfig:          o.Kubeconfig,
		BootstrapKubeconfig: o.BootstrapKubeconfig,
		CertDir:             o.certDir(),
		Rotate:              o.RotateCertificates,
		Log:                 log.WithField("component", "identity"),
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return creds.Config, creds.Failed, creds.Stop, nil
}

// ownerLookupClient reads the ClusterRole of --node-owner-clusterrole. A node may not read
// ClusterRoles (the Node authorizer), so with the node's own identity the read is made with the
// credentials of the pod vk-cri runs in (its ServiceAccount, which the chart lets read that one
// role); without --bootstrap-kubeconfig, with the API client's.
func ownerLookupClient(o *options, api kubernetes.Interface) (kubernetes.Interface, error) {
	if o.NodeOwnerClusterRole == "" || o.BootstrapKubeconfig == "" {
		return api, nil
	}
	cfg, err := rest.InClusterConfig()
	if err != nil {
		return nil, fmt.Errorf("--node-owner-clusterrole with --bootstrap-kubeconfig reads the ClusterRole with the pod's service account, which a node may not read: %w", err)
	}
	cfg.UserAgent = "vk-cri/" + version
	return kubernetes.NewForConfig(cfg)
}
