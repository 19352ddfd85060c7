//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	certutil "k8s.io/client-go/util/cert"
)

// nodeIdentity is a client built from a node agent's own credentials: the files it uses, no
// impersonation.
type nodeIdentity struct {
	node   string
	client kubernetes.Interface
}

func identityFrom(t *testing.T, node, kubeconfig string) nodeIdentity {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatalf("node %s's kubeconfig: %v", node, err)
	}
	return nodeIdentity{node: node, client: kubernetes.NewForConfigOrDie(cfg)}
}

// vkCRIIdentity is the e2e node's: the kubeconfig vk-cri wrote after its TLS bootstrap, which
// points at the certificate in its cert dir.
func vkCRIIdentity(t *testing.T) nodeIdentity {
	return identityFrom(t, nodeName, filepath.Join(s.env["STACK_DIR"], "nodes", nodeName, "kubelet.kubeconfig"))
}

// refIdentity is the reference kubelet's (hack/ref.sh runs it with kubelet-ref.kubeconfig;
// pki.sh makes it if the reference kubelet never ran on this stack).
func refIdentity(t *testing.T) nodeIdentity {
	kc := filepath.Join(s.env["PKI_DIR"], "kubelet-"+refNode+".kubeconfig")
	if _, err := os.Stat(kc); err != nil {
		stackScript(t, "pki.sh", "node-client-cert", refNode)
	}
	return identityFrom(t, refNode, kc)
}

// whoami asks the API server who the credentials are.
func (id nodeIdentity) whoami(t *testing.T) authenticationv1.UserInfo {
	t.Helper()
	r, err := id.client.AuthenticationV1().SelfSubjectReviews().Create(ctxFor(t, 30*time.Second), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("%s: SelfSubjectReview: %v", id.node, err)
	}
	return r.Status.UserInfo
}

// wantForbidden fails unless err is the API server's Forbidden.
func wantForbidden(t *testing.T, who, what string, err error) {
	t.Helper()
	if !apierrors.IsForbidden(err) {
		t.Errorf("%s: %s: got %v, want Forbidden", who, what, err)
	}
}

// awaitSecretReadable polls until the node may get the Secret: the Node authorizer learns of a pod's
// binding from its graph, shortly after the pod is bound.
func awaitSecretReadable(t *testing.T, id nodeIdentity, ns, name string) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(ctxFor(t, time.Minute), 200*time.Millisecond, 45*time.Second, true, func(ctx context.Context) (bool, error) {
		_, last = id.client.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("%s: get secret %s/%s of its own pod: %v", id.node, ns, name, last)
	}
}

// TestNodeIdentitiesAreHeldToANodesRights: the vk-cri node runs with system:node:<name> from
// its TLS bootstrap, and it, like the reference kubelet, may reach only what the Node authorizer
// and NodeRestriction give a node: its own pods' Secrets and tokens, its own Node and Lease.
func TestNodeIdentitiesAreHeldToANodesRights(t *testing.T) {
	ctx := ctxFor(t, 5*time.Minute)
	vk, ref := vkCRIIdentity(t), refIdentity(t)

	// Who they are: each node's user in system:nodes, no one else's.
	for _, id := range []nodeIdentity{vk, ref} {
		u := id.whoami(t)
		if u.Username != "system:node:"+id.node || !containsString(u.Groups, "system:nodes") {
			t.Errorf("%s authenticates as %q %v", id.node, u.Username, u.Groups)
		}
	}

	// vk-cri's certificate is the one issued for the bootstrap (or renewal) CSR made for the
	// kube-apiserver-client-kubelet signer and approved by the controller-manager.
	certPath := filepath.Join(s.env["STACK_DIR"], "nodes", nodeName, "pki", "kubelet-client-current.pem")
	data, err := os.ReadFile(certPath)
	if err != nil {
		t.Fatal(err)
	}
	certs, err := certutil.ParseCertsPEM(data)
	if err != nil {
		t.Fatalf("%s: %v", certPath, err)
	}
	csrs, err := s.kube.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var issuedBy *certificatesv1.CertificateSigningRequest
	for i, c := range csrs.Items {
		if block, _ := pem.Decode(c.Status.Certificate); block != nil && bytes.Equal(block.Bytes, certs[0].Raw) {
			issuedBy = &csrs.Items[i]
		}
	}
	if issuedBy == nil {
		t.Fatalf("no CSR issued %s", certPath)
	}
	if issuedBy.Spec.SignerName != certificatesv1.KubeAPIServerClientKubeletSignerName ||
		!(strings.HasPrefix(issuedBy.Spec.Username, "system:bootstrap:") || issuedBy.Spec.Username == "system:node:"+nodeName) {
		t.Errorf("CSR %s: signer %q, requested by %q", issuedBy.Name, issuedBy.Spec.SignerName, issuedBy.Spec.Username)
	}
	approvedByController := false
	for _, c := range issuedBy.Status.Conditions {
		approvedByController = approvedByController || (c.Type == certificatesv1.CertificateApproved && c.Reason == "AutoApproved")
	}
	if !approvedByController {
		t.Errorf("CSR %s was not approved by kube-controller-manager: %+v", issuedBy.Name, issuedBy.Status.Conditions)
	}

	// One Secret per node, each used by one pod of that node only; a ServiceAccount no pod uses.
	ns := newNamespace(t)
	for _, name := range []string{"vk-secret", "ref-secret"} {
		_, err := s.kube.CoreV1().Secrets(ns).Create(ctx, &v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, StringData: map[string]string{"k": name}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.kube.CoreV1().ServiceAccounts(ns).Create(ctx, &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "unused"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The vk-cri pod mounts its Secret and the default service-account token.
	yes := true
	vkPod := basePod("vk-pod", busybox("c", "test -s /etc/secret/k && test -s /var/run/secrets/kubernetes.io/serviceaccount/token && exec sleep 3600"))
	vkPod.Spec.AutomountServiceAccountToken = &yes
	vkPod.Spec.Volumes = []v1.Volume{{Name: "s", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "vk-secret"}}}}
	vkPod.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "s", MountPath: "/etc/secret"}}
	vkPod = createPod(t, ns, vkPod)
	// The reference node's pod is bound to it directly (the Node authorizer needs only the binding).
	refPod := basePod("ref-pod", busybox("c", "exec sleep 3600"))
	refPod.Spec.NodeSelector = nil
	refPod.Spec.NodeName = refNode
	refPod.Spec.Tolerations = []v1.Toleration{{Operator: v1.TolerationOpExists}}
	refPod.Spec.Volumes = []v1.Volume{{Name: "s", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "ref-secret"}}}}
	refPod.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "s", MountPath: "/etc/secret"}}
	refPod = createPod(t, ns, refPod)

	// Positive: vk-cri reads its own pod's Secret and runs the pod with the default token.
	awaitSecretReadable(t, vk, ns, "vk-secret")
	waitPod(t, ns, "vk-pod", 2*time.Minute, "Running and Ready with its Secret and token", isRunningReady)
	// The reference kubelet may read its own pod's Secret too: the refusals below are the graph's.
	awaitSecretReadable(t, ref, ns, "ref-secret")

	// A kube-system Lease that is no node's.
	lease, err := s.kube.CoordinationV1().Leases("kube-system").Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{GenerateName: "vk-cri-identity-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = s.kube.CoordinationV1().Leases("kube-system").Delete(context.Background(), lease.Name, metav1.DeleteOptions{})
	})

	dryRun := []string{metav1.DryRunAll}
	for _, tc := range []struct {
		id          nodeIdentity
		other       string // the other node
		otherSecret string
		otherPod    *v1.Pod
	}{
		{vk, refNode, "ref-secret", refPod},
		{ref, nodeName, "vk-secret", vkPod},
	} {
		c, who := tc.id.client, tc.id.node
		_, err := c.CoreV1().Secrets("").List(ctx, metav1.ListOptions{})
		wantForbidden(t, who, "list secrets in all namespaces", err)
		_, err = c.CoreV1().Secrets(ns).Get(ctx, tc.otherSecret, metav1.GetOptions{})
		wantForbidden(t, who, "get the Secret of node "+tc.other+"'s pod", err)
		_, err = c.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "unused", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		wantForbidden(t, who, "create a token for a service account none of its pods uses", err)
		// Bound to the other node's pod: refused as well (NodeRestriction).
		_, err = c.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "default", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
			BoundObjectRef: &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: tc.otherPod.Name, UID: tc.otherPod.UID},
		}}, metav1.CreateOptions{})
		wantForbidden(t, who, "create a token bound to node "+tc.other+"'s pod", err)
		_, err = c.CoreV1().Nodes().Patch(ctx, tc.other, types.MergePatchType, []byte(`{"metadata":{"labels":{"vk-cri-identity-test":"x"}}}`), metav1.PatchOptions{DryRun: dryRun})
		wantForbidden(t, who, "patch node "+tc.other, err)
		err = c.CoreV1().Pods(ns).Delete(ctx, tc.otherPod.Name, metav1.DeleteOptions{DryRun: dryRun})
		wantForbidden(t, who, "delete node "+tc.other+"'s pod", err)
		l := lease.DeepCopy()
		l.Spec.HolderIdentity = &who
		_, err = c.CoordinationV1().Leases("kube-system").Update(ctx, l, metav1.UpdateOptions{DryRun: dryRun})
		wantForbidden(t, who, "update kube-system Lease "+lease.Name, err)
	}

	// The same calls on what is the node's own are allowed, so the refusals above are about whose
	// objects they are.
	if _, err := vk.client.CoordinationV1().Leases("kube-node-lease").Get(ctx, nodeName, metav1.GetOptions{}); err != nil {
		t.Errorf("vk-cri: get its own Lease: %v", err)
	}
	if _, err := vk.client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "default", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		BoundObjectRef: &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: vkPod.Name, UID: vkPod.UID},
	}}, metav1.CreateOptions{}); err != nil {
		t.Errorf("vk-cri: create a token bound to its own pod: %v", err)
	}
	if _, err := vk.client.CoreV1().Nodes().Patch(ctx, nodeName, types.MergePatchType, []byte(`{"metadata":{"annotations":{"vk-cri-identity-test":"x"}}}`), metav1.PatchOptions{DryRun: dryRun}); err != nil {
		t.Errorf("vk-cri: patch its own node: %v", err)
	}
}
