// Package identity owns the node's credentials towards the API server: the client certificate of
// user system:node:<nodename> in group system:nodes, which the Node authorizer and the
// NodeRestriction admission plugin hold to what a kubelet may do.
//
// It obtains that certificate by TLS bootstrap, as the kubelet does
// (pkg/kubelet/certificate/bootstrap and cmd/kubelet/app's buildKubeletClientConfig): a bootstrap
// kubeconfig (a bootstrap token, as kubeadm hands out) is used to create a CertificateSigningRequest
// for signer kubernetes.io/kube-apiserver-client-kubelet, which kube-controller-manager approves
// and signs; the key pair is kept in the cert dir (kubelet-client-current.pem) and a kubeconfig
// pointing at it is written, so that a restart reuses it. With rotation on, client-go's
// certificate manager requests a new certificate before the current one expires, and the API
// transport presents whichever certificate is current, closing its connections when it changes.
package identity
