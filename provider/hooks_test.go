package provider

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// hookServer serves h on addr ("127.0.0.1:0" and the like) and counts its requests.
func hookServer(t *testing.T, addr string, h http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	var hits atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		h(w, r)
	}))
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &hits
}

func hostPort(t *testing.T, srv *httptest.Server) (string, intstr.IntOrString) {
	t.Helper()
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Hostname(), intstr.Parse(u.Port())
}

type recordedEvent struct{ eventType, reason, message string }

// testHookRunner calls httpGet hooks on host (the pod's IP) and records pod events.
func testHookRunner(host string, events *[]recordedEvent) *hookRunner {
	return &hookRunner{
		podIP:  func(context.Context, *v1.Pod) (string, error) { return host, nil },
		client: newHookHTTPClient(),
		podEvent: func(_ *v1.Pod, eventType, reason, message string) {
			*events = append(*events, recordedEvent{eventType, reason, message})
		},
	}
}

// A hook whose server redirects to another host does not follow the redirect: the node never
// calls a URL the pod chose on a host that is not the hook's (the loopback of the node, a
// metadata service). The redirect is the hook's answer, and any answer is a success, as with the
// kubelet. A redirect to the same host, even on another port, is followed.
func TestHookRedirects(t *testing.T) {
	// Another host: a second loopback address, which the pod's server names in its Location.
	elsewhere, elsewhereHits := hookServer(t, "127.0.0.2:0", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "node-local secret")
	})
	sameHostOtherPort, sameHostHits := hookServer(t, "127.0.0.1:0", func(w http.ResponseWriter, _ *http.Request) {})
	var loops atomic.Int32
	pod, podHits := hookServer(t, "127.0.0.1:0", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-another-host":
			http.Redirect(w, r, elsewhere.URL+"/latest/meta-data", http.StatusFound)
		case "/to-the-same-host":
			http.Redirect(w, r, sameHostOtherPort.URL+"/next", http.StatusMovedPermanently)
		case "/loop":
			loops.Add(1)
			http.Redirect(w, r, "/loop", http.StatusTemporaryRedirect)
		}
	})
	host, port := hostPort(t, pod)
	var events []recordedEvent
	r := testHookRunner(host, &events)
	p := testPod()
	target := hookTarget{Pod: p, Container: &p.Spec.Containers[0], ContainerID: "cid"}
	get := func(path string) *v1.LifecycleHandler {
		return &v1.LifecycleHandler{HTTPGet: &v1.HTTPGetAction{Path: path, Port: port}}
	}
	ctx := context.Background()

	if msg, err := r.run(ctx, target, get("/to-another-host")); err != nil {
		t.Errorf("redirect to another host: %v %q, want the redirect taken as the answer", err, msg)
	}
	if n := elsewhereHits.Load(); n != 0 {
		t.Errorf("the hook followed a redirect to another host (%d requests there)", n)
	}

	if _, err := r.run(ctx, target, get("/to-the-same-host")); err != nil {
		t.Errorf("redirect to the same host: %v", err)
	}
	if n := sameHostHits.Load(); n != 1 {
		t.Errorf("redirect to the same host on another port: %d requests there, want it followed once", n)
	}

	msg, err := r.run(ctx, target, get("/loop"))
	if err == nil || !strings.Contains(err.Error(), "stopped after 10 redirects") ||
		!strings.HasPrefix(msg, `HTTP lifecycle hook (/loop) for Container "app" in Pod "web_default(uid-1)" failed - error: `) {
		t.Errorf("redirect loop: %v %q, want it stopped after 10 redirects", err, msg)
	}
	// The tenth redirect is refused: ten requests in all, as net/http's default policy.
	if n := loops.Load(); n != 10 {
		t.Errorf("redirect loop: %d requests, want 10", n)
	}
	if podHits.Load() != 12 || len(events) != 0 {
		t.Errorf("pod server hits %d, events %v", podHits.Load(), events)
	}
}

// An HTTPS hook answered in plain HTTP is retried over HTTP; a retry that succeeds is the
// kubelet's LifecycleHTTPFallback warning on the pod.
func TestHookHTTPSFallbackIsAnEvent(t *testing.T) {
	plain, hits := hookServer(t, "127.0.0.1:0", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			t.Errorf("the HTTP retry kept the Authorization header")
		}
	})
	host, port := hostPort(t, plain)
	var events []recordedEvent
	r := testHookRunner(host, &events)
	p := testPod()
	target := hookTarget{Pod: p, Container: &p.Spec.Containers[0], ContainerID: "cid"}
	h := &v1.LifecycleHandler{HTTPGet: &v1.HTTPGetAction{Path: "/start", Port: port, Scheme: v1.URISchemeHTTPS,
		HTTPHeaders: []v1.HTTPHeader{{Name: "Authorization", Value: "Bearer x"}}}}
	if msg, err := r.run(context.Background(), target, h); err != nil {
		t.Fatalf("HTTPS hook answered in HTTP: %v %q", err, msg)
	}
	want := recordedEvent{v1.EventTypeWarning, "LifecycleHTTPFallback",
		fmt.Sprintf("request to HTTPS lifecycle hook %s:%s got HTTP response, retry with HTTP succeeded", host, port.String())}
	if len(events) != 1 || events[0] != want {
		t.Errorf("events %+v, want %+v", events, want)
	}
	if hits.Load() != 1 {
		t.Errorf("%d plain requests, want the one retry", hits.Load())
	}
}
