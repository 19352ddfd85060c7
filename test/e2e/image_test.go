//go:build e2e

package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// privateRegistry fronts the stack's registry with basic authentication, on a loopback port of
// its own (a new host for containerd, so nothing of it is cached). It counts the requests
// refused and those let through.
type privateRegistry struct {
	host              string
	refused, accepted atomic.Int64
}

func startPrivateRegistry(t *testing.T, user, password string) *privateRegistry {
	t.Helper()
	upstream, _ := url.Parse("http://" + s.env["REGISTRY"])
	proxy := httputil.NewSingleHostReverseProxy(upstream)
	r := &privateRegistry{}
	handler := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		u, p, ok := req.BasicAuth()
		if !ok || u != user || p != password {
			r.refused.Add(1)
			w.Header().Set("WWW-Authenticate", `Basic realm="vk-cri e2e"`)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`)
			return
		}
		r.accepted.Add(1)
		req.Host = upstream.Host
		proxy.ServeHTTP(w, req)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	r.host = ln.Addr().String()
	return r
}

// A private image is pulled with the pod's imagePullSecrets and refused without them, with the
// registry's answer in the ErrImagePull message.
func TestImagePullSecretsAuthenticate(t *testing.T) {
	ns := newNamespace(t)
	reg := startPrivateRegistry(t, "puller", "pa55word")
	img := reg.host + "/vk-cri/busybox:latest"

	denied := basePod("denied", v1.Container{Name: "main", Image: img, Command: []string{"sleep", "3600"}})
	createPod(t, ns, denied)
	// The pull error's waiting reason may turn into ImagePullBackOff before a poll sees it; its
	// message is in the Failed event either way.
	waitPod(t, ns, "denied", 2*time.Minute, "ErrImagePull or ImagePullBackOff", func(p *v1.Pod) bool {
		r, _ := waitingReason(p, "main")
		return r == "ErrImagePull" || r == "ImagePullBackOff"
	})
	var msg string
	err := wait.PollUntilContextTimeout(ctxFor(t, time.Minute), 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		evs, err := s.kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=denied,reason=Failed"})
		if err != nil {
			return false, nil
		}
		for _, e := range evs.Items {
			if strings.HasPrefix(e.Message, "Failed to pull image") {
				msg = e.Message
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no Failed event for the refused pull")
	}
	// containerd 1.6 quotes the registry's "401 Unauthorized"; 2.x says "pull access denied, ...
	// authorization failed: no basic auth credentials" after the same 401.
	lower := strings.ToLower(msg)
	if !strings.Contains(lower, "unauthorized") && !strings.Contains(lower, "authorization failed") {
		t.Errorf("pull failure %q lacks the registry's refusal", msg)
	}
	if reg.accepted.Load() != 0 {
		t.Errorf("the registry let %d requests through without credentials", reg.accepted.Load())
	}

	cfg, _ := json.Marshal(map[string]any{"auths": map[string]any{
		"http://" + reg.host: map[string]string{"auth": base64.StdEncoding.EncodeToString([]byte("puller:pa55word"))},
		"other.example":      map[string]string{"username": "x", "password": "y"},
	}})
	ctx := ctxFor(t, time.Minute)
	if _, err := s.kube.CoreV1().Secrets(ns).Create(ctx, &v1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "regcred"},
		Type:       v1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{v1.DockerConfigJsonKey: cfg},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	allowed := basePod("allowed", v1.Container{Name: "main", Image: img, Command: []string{"sleep", "3600"}})
	allowed.Spec.ImagePullSecrets = []v1.LocalObjectReference{{Name: "regcred"}}
	createPod(t, ns, allowed)
	waitPod(t, ns, "allowed", 2*time.Minute, "Running", isRunningReady)
	if reg.accepted.Load() == 0 {
		t.Errorf("the registry saw no authenticated request")
	}

	// A pull secret that does not exist is reported, and the pull is tried anyway.
	missing := basePod("missing-secret", v1.Container{Name: "main", Image: image("busybox:latest"), Command: []string{"sleep", "3600"}})
	missing.Spec.ImagePullSecrets = []v1.LocalObjectReference{{Name: "nope"}}
	createPod(t, ns, missing)
	waitPod(t, ns, "missing-secret", 2*time.Minute, "Running", isRunningReady)
	if msg := eventWithReason(t, ns, "missing-secret", "FailedToRetrieveImagePullSecret"); msg != "Unable to retrieve some image pull secrets (nope); attempting to pull the image may not succeed." {
		t.Errorf("FailedToRetrieveImagePullSecret message %q", msg)
	}
}

// The node status lists the runtime's images, at most 50 and largest first, each under at most 5
// names (digests first), the test images among them.
func TestImageNodeStatusListsImages(t *testing.T) {
	// vktest is pulled under one name only (busybox gets more from other tests' registries,
	// which can push its tag out of the first five names).
	repo := image("vktest")
	var last []v1.ContainerImage
	err := wait.PollUntilContextTimeout(ctxFor(t, time.Minute), time.Second, 50*time.Second, true, func(ctx context.Context) (bool, error) {
		n, err := s.kube.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = n.Status.Images
		for _, img := range last {
			for _, name := range img.Names {
				if strings.HasPrefix(name, repo+":") || strings.HasPrefix(name, repo+"@") {
					return true, nil
				}
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("node status images lack %s: %v", repo, last)
	}
	if len(last) > 50 {
		t.Errorf("node status lists %d images, the kubelet's maximum is 50", len(last))
	}
	for i, img := range last {
		if len(img.Names) > 5 {
			t.Errorf("image %d has %d names, the kubelet lists at most 5", i, len(img.Names))
		}
		if i > 0 && img.SizeBytes > last[i-1].SizeBytes {
			t.Errorf("images not listed largest first: %d after %d", img.SizeBytes, last[i-1].SizeBytes)
		}
	}
}

// imagePullPolicy Never with an image the node lacks: ErrImageNeverPull, nothing pulled.
func TestImagePullPolicyNeverWithoutImage(t *testing.T) {
	ns := newNamespace(t)
	c := v1.Container{Name: "main", Image: image("does-not-exist:never"), ImagePullPolicy: v1.PullNever}
	createPod(t, ns, basePod("never", c))
	waitPod(t, ns, "never", time.Minute, "ErrImageNeverPull", func(p *v1.Pod) bool {
		r, m := waitingReason(p, "main")
		return r == "ErrImageNeverPull" && strings.Contains(m, "is not present with pull policy of Never")
	})
}
