package identity

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/sirupsen/logrus"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/certificate"
	"k8s.io/utils/clock"
)

// Options say where the node's credentials come from and go to (the kubelet's flags of the
// same names).
type Options struct {
	NodeName string
	// Kubeconfig is read when it holds a certificate that has not expired; otherwise it is
	// written after the bootstrap, pointing at the key pair in CertDir.
	Kubeconfig string
	// BootstrapKubeconfig holds the credentials that may request a node client certificate (a
	// bootstrap token).
	BootstrapKubeconfig string
	// CertDir keeps kubelet-client-current.pem (a symlink to the dated key pair).
	CertDir string
	// Rotate renews the certificate before it expires (--rotate-certificates).
	Rotate bool
	Log    *logrus.Entry

	// newClient builds the client that requests certificates (tests give a fake one).
	newClient func(*rest.Config) (kubernetes.Interface, error)
	// clock and checkPeriod drive the rotating transport's checks (tests shorten them).
	clock       clock.Clock
	checkPeriod time.Duration
}

// Credentials are the node's client configuration towards the API server.
type Credentials struct {
	// Config authenticates as system:node:<nodename>; build every API client from it.
	Config *rest.Config
	// Failed reports, once, that the credentials are gone for good: the certificate expired or
	// vanished and could not be renewed for rotationGrace while the API server answered. The
	// kubelet exits then, so that its supervisor restarts it with the bootstrap credentials.
	Failed <-chan error

	stop func()
}

// Stop ends the rotation.
func (c *Credentials) Stop() {
	if c.stop != nil {
		c.stop()
	}
}

// rotationGrace is how long the node goes on without a valid certificate before giving up, as
// the kubelet's exitAfter (cmd/kubelet/app/server.go: five minutes).
const rotationGrace = 5 * time.Minute

// bootstrapTimeout bounds the wait for the signed certificate, as the kubelet's (an hour: the
// request may need a person to approve it).
const bootstrapTimeout = time.Hour

func (o *Options) defaults() error {
	if o.NodeName == "" {
		return fmt.Errorf("identity: no node name")
	}
	if o.Kubeconfig == "" {
		return fmt.Errorf("--bootstrap-kubeconfig needs --kubeconfig: the path the node's own kubeconfig is written to")
	}
	if o.CertDir == "" {
		return fmt.Errorf("identity: no certificate directory")
	}
	if o.Log == nil {
		o.Log = logrus.NewEntry(logrus.StandardLogger())
	}
	if o.newClient == nil {
		o.newClient = func(c *rest.Config) (kubernetes.Interface, error) { return kubernetes.NewForConfig(c) }
	}
	if o.clock == nil {
		o.clock = clock.RealClock{}
	}
	if o.checkPeriod == 0 {
		o.checkPeriod = 10 * time.Second // the kubelet's UpdateTransport period
	}
	return os.MkdirAll(o.CertDir, 0o700)
}

// Load gives the node its credentials: the kubeconfig's when it is still valid, otherwise a
// certificate obtained by TLS bootstrap. With Rotate, the certificate manager keeps renewing it
// and Load returns once a certificate is at hand (or ctx ends).
func Load(ctx context.Context, o Options) (*Credentials, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	if o.Rotate {
		return loadRotating(ctx, o)
	}
	if err := bootstrapOnce(ctx, o); err != nil {
		return nil, err
	}
	cfg, err := loadKubeconfig(o.Kubeconfig)
	if err != nil {
		return nil, err
	}
	return &Credentials{Config: cfg, Failed: make(chan error)}, nil
}

// newStore is the file store the kubelet keeps its client certificate in.
func newStore(certDir string) (certificate.FileStore, error) {
	s, err := certificate.NewFileStore("kubelet-client", certDir, certDir, "", "")
	if err != nil {
		return nil, fmt.Errorf("client certificate store %s: %w", certDir, err)
	}
	return s, nil
}

// loadRotating is the kubelet's buildKubeletClientConfig with rotation on: requests go out
// with the certificate manager's current certificate; the manager requests with the node's own
// certificate once it has one, with the bootstrap credentials before.
func loadRotating(ctx context.Context, o Options) (*Credentials, error) {
	store, err := newStore(o.CertDir)
	if err != nil {
		return nil, err
	}
	valid, err := kubeconfigStillValid(o.Kubeconfig, o.clock.Now())
	if err != nil {
		return nil, err
	}
	var requestConfig, nodeConfig *rest.Config
	if valid {
		if nodeConfig, err = loadKubeconfig(o.Kubeconfig); err != nil {
			return nil, err
		}
		requestConfig = nodeConfig
		o.Log.WithField("kubeconfig", o.Kubeconfig).Info("identity: the kubeconfig's client certificate is still valid: no bootstrap")
	} else {
		if requestConfig, err = loadKubeconfig(o.BootstrapKubeconfig); err != nil {
			return nil, fmt.Errorf("--bootstrap-kubeconfig: %w", err)
		}
		nodeConfig = rest.AnonymousClientConfig(requestConfig)
		nodeConfig.CertFile, nodeConfig.KeyFile = store.CurrentPath(), store.CurrentPath()
		if err := writeNodeKubeconfig(requestConfig, o.Kubeconfig, store.CurrentPath()); err != nil {
			return nil, err
		}
		o.Log.WithFields(logrus.Fields{"kubeconfig": o.Kubeconfig, "certDir": o.CertDir}).Info("identity: requesting a node client certificate with the bootstrap credentials")
	}
	// The store falls back to the kubeconfig's own files when it has no current pair yet.
	store, err = certificate.NewFileStore("kubelet-client", o.CertDir, o.CertDir, nodeConfig.CertFile, nodeConfig.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("client certificate store %s: %w", o.CertDir, err)
	}
	mctx := context.WithoutCancel(ctx)
	m, err := certificate.NewManager(&certificate.Config{
		ClientsetFn: func(current *tls.Certificate) (kubernetes.Interface, error) {
			if current != nil {
				return o.newClient(nodeConfig)
			}
			return o.newClient(requestConfig)
		},
		Template:                clientTemplate(o.NodeName),
		SignerName:              "kubernetes.io/kube-apiserver-client-kubelet",
		GetUsages:               clientUsages,
		BootstrapCertificatePEM: nodeConfig.CertData,
		BootstrapKeyPEM:         nodeConfig.KeyData,
		CertificateStore:        store,
		Name:                    "kubelet-client",
		Ctx:                     &mctx,
	})
	if err != nil {
		return nil, fmt.Errorf("client certificate manager: %w", err)
	}
	rt, err := newRotatingTransport(nodeConfig, m, o.clock, o.Log)
	if err != nil {
		return nil, err
	}
	m.Start()
	stopCh := make(chan struct{})
	go wait.Until(rt.check, o.checkPeriod, stopCh)
	stop := func() { close(stopCh); m.Stop() }

	// The node's first requests would go out anonymous without a certificate: wait for one.
	err = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(context.Context) (bool, error) {
		rt.check()
		return m.Current() != nil, nil
	})
	if err != nil {
		stop()
		return nil, fmt.Errorf("waiting for the node client certificate (is its CSR approved?): %w", err)
	}
	leaf := m.Current().Leaf
	o.Log.WithFields(logrus.Fields{"subject": leaf.Subject.String(), "notAfter": leaf.NotAfter, "pem": filepath.Join(o.CertDir, "kubelet-client-current.pem")}).Info("identity: node client certificate in use; rotation on")
	return &Credentials{Config: rt.config, Failed: rt.failed, stop: stop}, nil
}
