//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// kubeletURL is the e2e node's kubelet API.
func kubeletURL(path string) string {
	return "https://" + net.JoinHostPort(s.env["NODE_IP"], nodePort) + path
}

// clusterCAPool trusts the cluster CA, which signs kubelet-serving certificates.
func clusterCAPool(t *testing.T) *x509.CertPool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.env["PKI_DIR"], "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		t.Fatal("no certificate in ca.crt")
	}
	return pool
}

// kubeletClient calls the node's kubelet API verifying its certificate against the cluster CA,
// presenting the client certificate named (in PKI_DIR) if any.
func kubeletClient(t *testing.T, clientCert string) *http.Client {
	t.Helper()
	cfg := &tls.Config{RootCAs: clusterCAPool(t), MinVersion: tls.VersionTLS12}
	if clientCert != "" {
		pair, err := tls.LoadX509KeyPair(filepath.Join(s.env["PKI_DIR"], clientCert+".crt"), filepath.Join(s.env["PKI_DIR"], clientCert+".key"))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
}

// kubeletGet does one request and returns the status code and body.
func kubeletDo(t *testing.T, c *http.Client, method, path, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, kubeletURL(path), nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// waitKubeletAPIServing waits until the node's kubelet API presents a certificate that verifies
// against the cluster CA for the node's IP (the node is Ready before its CSR is approved and
// signed), and returns it.
func waitKubeletAPIServing(t *testing.T) *x509.Certificate {
	t.Helper()
	var leaf *x509.Certificate
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 45*time.Second, true, func(context.Context) (bool, error) {
		conn, err := tls.Dial("tcp", net.JoinHostPort(s.env["NODE_IP"], nodePort), &tls.Config{RootCAs: clusterCAPool(t), ServerName: s.env["NODE_IP"]})
		if err != nil {
			return false, nil
		}
		leaf = conn.ConnectionState().PeerCertificates[0]
		return true, conn.Close()
	})
	if err != nil {
		t.Fatalf("the kubelet API presents no certificate verifiable for %s within 45s", s.env["NODE_IP"])
	}
	return leaf
}

func TestKubeletAPIServingCertificateFromApprovedCSR(t *testing.T) {
	ctx := ctxFor(t, time.Minute)
	// The kubelet API presents a certificate that verifies against the cluster CA for the node's
	// IP, once its request is approved and signed.
	leaf := waitKubeletAPIServing(t)
	if leaf.Subject.CommonName != "system:node:"+nodeName || strings.Join(leaf.Subject.Organization, ",") != "system:nodes" {
		t.Errorf("serving certificate subject %q", leaf.Subject)
	}
	if !containsString(leaf.DNSNames, nodeName) || len(leaf.IPAddresses) == 0 || !leaf.IPAddresses[0].Equal(net.ParseIP(s.env["NODE_IP"])) {
		t.Errorf("serving certificate SANs: dns=%v ips=%v", leaf.DNSNames, leaf.IPAddresses)
	}

	// It was issued for a kubelet-serving CSR the node made with its own identity and
	// hack/csr-approver.sh approved.
	list, err := s.kube.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var issued *certificatesv1.CertificateSigningRequest
	for i, csr := range list.Items {
		if block, _ := pem.Decode(csr.Status.Certificate); block != nil && bytes.Equal(block.Bytes, leaf.Raw) {
			issued = &list.Items[i]
		}
	}
	if issued == nil {
		t.Fatalf("no CSR issued the certificate the node presents")
	}
	approved := false
	for _, c := range issued.Status.Conditions {
		approved = approved || (c.Type == certificatesv1.CertificateApproved && c.Status == v1.ConditionTrue)
	}
	if !approved || issued.Spec.Username != "system:node:"+nodeName || issued.Spec.SignerName != certificatesv1.KubeletServingSignerName {
		t.Errorf("CSR %s: approved=%v requested by %q for signer %q", issued.Name, approved, issued.Spec.Username, issued.Spec.SignerName)
	}
	wantUsages := map[certificatesv1.KeyUsage]bool{certificatesv1.UsageDigitalSignature: true, certificatesv1.UsageServerAuth: true}
	for _, u := range issued.Spec.Usages {
		if !wantUsages[u] {
			t.Errorf("CSR usage %q", u)
		}
	}

	// The API server reaches the node verifying that certificate (--kubelet-certificate-authority):
	// container logs through it.
	ns := newNamespace(t)
	createPod(t, ns, basePod("talker", busybox("talker", "echo first line; echo second line; exec sleep 3600")))
	waitPod(t, ns, "talker", 2*time.Minute, "Running", isRunningReady)
	var logs string
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		b, err := s.kube.CoreV1().Pods(ns).GetLogs("talker", &v1.PodLogOptions{}).DoRaw(ctx)
		logs = string(b)
		if err != nil {
			logs = err.Error()
			return false, nil
		}
		return strings.Contains(logs, "second line"), nil
	})
	if err != nil || logs != "first line\nsecond line\n" {
		t.Fatalf("logs through the API server: %q", logs)
	}
	// The real kubectl v1.37, with no insecure option anywhere.
	out, err := exec.Command(s.env["KUBECTL"], "--kubeconfig", s.env["KUBECONFIG"], "logs", "-n", ns, "talker", "--tail=1").CombinedOutput()
	if err != nil || string(out) != "second line\n" {
		t.Errorf("kubectl logs --tail=1: %q %v", out, err)
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// subjectWithRights makes a service account in ns bound to a ClusterRole of the given rules on
// nodes subresources, and returns a token for it.
func subjectWithRights(t *testing.T, ns, name string, subresources ...string) string {
	t.Helper()
	ctx := ctxFor(t, 30*time.Second)
	if _, err := s.kube.CoreV1().ServiceAccounts(ns).Create(ctx, &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(subresources) > 0 {
		roleName := ns + "-" + name
		var resources []string
		for _, sub := range subresources {
			resources = append(resources, "nodes/"+sub)
		}
		role := &rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: roleName},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: resources, Verbs: []string{"get", "create"}}},
		}
		if _, err := s.kube.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		binding := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: roleName},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: roleName},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}},
		}
		if _, err := s.kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = s.kube.RbacV1().ClusterRoleBindings().Delete(context.Background(), roleName, metav1.DeleteOptions{})
			_ = s.kube.RbacV1().ClusterRoles().Delete(context.Background(), roleName, metav1.DeleteOptions{})
		})
	}
	tr, err := s.kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

func TestKubeletAPIAuthenticationAndAuthorization(t *testing.T) {
	waitKubeletAPIServing(t)
	ns := newNamespace(t)
	createPod(t, ns, basePod("talker", busybox("talker", "echo hello; exec sleep 3600")))
	waitPod(t, ns, "talker", 2*time.Minute, "Running", isRunningReady)

	noRights := subjectWithRights(t, ns, "nobody")
	proxy := subjectWithRights(t, ns, "proxy", "proxy")
	logOnly := subjectWithRights(t, ns, "log-only", "log")
	podsOnly := subjectWithRights(t, ns, "pods-only", "pods")
	anonymous := kubeletClient(t, "")
	apiserver := kubeletClient(t, "apiserver-kubelet-client")
	vkcri := kubeletClient(t, "vk-cri")
	logsPath := fmt.Sprintf("/containerLogs/%s/talker/talker", ns)
	sa := func(name string) string { return "system:serviceaccount:" + ns + ":" + name }

	tests := []struct {
		name         string
		client       *http.Client
		token        string
		method, path string
		code         int
		body         string
	}{
		{"no credentials", anonymous, "", "GET", "/pods", 401, "Unauthorized\n"},
		{"no credentials, logs", anonymous, "", "GET", logsPath, 401, "Unauthorized\n"},
		{"invalid token", anonymous, "not-a-token", "GET", "/pods", 401, "Unauthorized\n"},
		{"token without rights", anonymous, noRights, "GET", "/pods", 403,
			"Forbidden (user=" + sa("nobody") + ", verb=get, resource=nodes, subresource(s)=[pods proxy])\n"},
		{"token without rights, logs", anonymous, noRights, "GET", logsPath, 403,
			"Forbidden (user=" + sa("nobody") + ", verb=get, resource=nodes, subresource(s)=[proxy])\n"},
		{"client cert without rights", vkcri, "", "GET", "/healthz", 403,
			"Forbidden (user=vk-cri, verb=get, resource=nodes, subresource(s)=[healthz proxy])\n"},
		{"nodes/proxy token, logs", anonymous, proxy, "GET", logsPath, 200, "hello\n"},
		{"nodes/proxy token, pods", anonymous, proxy, "GET", "/pods", 200, ""},
		{"nodes/pods token, pods", anonymous, podsOnly, "GET", "/pods", 200, ""},
		{"nodes/pods token, exec", anonymous, podsOnly, "POST", "/exec/" + ns + "/talker/talker?command=true&output=1", 403,
			"Forbidden (user=" + sa("pods-only") + ", verb=create, resource=nodes, subresource(s)=[proxy])\n"},
		{"nodes/log token, exec", anonymous, logOnly, "POST", "/exec/" + ns + "/talker/talker?command=true&output=1", 403,
			"Forbidden (user=" + sa("log-only") + ", verb=create, resource=nodes, subresource(s)=[proxy])\n"},
		// /logs/ is the node's system log directory (hack/node.sh: the stack's logs, this node's
		// own log among them), which nodes/log opens and nodes/proxy does not, as with the kubelet.
		{"nodes/log token, system logs", anonymous, logOnly, "GET", "/logs/vk-cri-" + nodeName + ".log", 200, ""},
		{"nodes/proxy token, system logs", anonymous, proxy, "GET", "/logs/", 403,
			"Forbidden (user=" + sa("proxy") + ", verb=get, resource=nodes, subresource(s)=[log])\n"},
		{"API server's client certificate, logs", apiserver, "", "GET", logsPath, 200, "hello\n"},
		{"API server's client certificate, healthz", apiserver, "", "GET", "/healthz", 200, "ok"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := kubeletDo(t, tt.client, tt.method, tt.path, tt.token)
			if code != tt.code || (tt.body != "" && body != tt.body) {
				t.Errorf("%s %s: %d %q, want %d %q", tt.method, tt.path, code, body, tt.code, tt.body)
			}
		})
	}
}

func TestKubeletAPIHealthzOnBothPorts(t *testing.T) {
	waitKubeletAPIServing(t)
	code, body := kubeletDo(t, kubeletClient(t, "apiserver-kubelet-client"), "GET", "/healthz?verbose", "")
	if code != 200 || !strings.Contains(body, "[+]ping ok") || !strings.Contains(body, "[+]syncloop ok") || !strings.Contains(body, "healthz check passed") {
		t.Errorf("secure /healthz?verbose: %d %q", code, body)
	}
	var port int
	if _, err := fmt.Sscan(nodePort, &port); err != nil {
		t.Fatal(err)
	}
	// hack/node.sh puts the localhost healthz port at the kubelet port + 1000.
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/healthz", port+1000))
	if err != nil {
		t.Fatalf("localhost healthz port: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(b) != "ok" {
		t.Errorf("localhost /healthz: %d %q", resp.StatusCode, b)
	}
	// Only the loopback address listens.
	if c, err := net.DialTimeout("tcp", net.JoinHostPort(s.env["NODE_IP"], fmt.Sprint(port+1000)), 2*time.Second); err == nil {
		_ = c.Close()
		t.Errorf("healthz port reachable on the node IP")
	}
}

func TestKubeletAPIServingCertificateKeptAcrossRestart(t *testing.T) {
	before := waitKubeletAPIServing(t)
	ctx := ctxFor(t, 2*time.Minute)
	csrs := func() int {
		list, err := s.kube.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, csr := range list.Items {
			if block, _ := pem.Decode(csr.Spec.Request); block != nil {
				if req, err := x509.ParseCertificateRequest(block.Bytes); err == nil && req.Subject.CommonName == "system:node:"+nodeName {
					n++
				}
			}
		}
		return n
	}
	requested := csrs()
	// Like the kubelet's, the certificate lives in the cert dir and is used again after a restart
	// while it is valid: no new request.
	restartNode(t, "")
	after := waitKubeletAPIServing(t)
	if !bytes.Equal(before.Raw, after.Raw) {
		t.Errorf("a new certificate after a restart (serial %v, was %v)", after.SerialNumber, before.SerialNumber)
	}
	if n := csrs(); n != requested {
		t.Errorf("%d CSRs for the node after the restart, %d before", n, requested)
	}
}
