package prober

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	critest "k8s.io/cri-api/pkg/apis/testing"
	remote "k8s.io/cri-client/pkg"
	utilexec "k8s.io/utils/exec"
)

func hostPort(t *testing.T, rawURL string) (string, int) {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(u.Port())
	return u.Hostname(), port
}

func TestHTTPGet(t *testing.T) {
	var gotAgent, gotAccept, gotHeader, gotHost string
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		gotAgent, gotAccept, gotHeader, gotHost = r.UserAgent(), r.Header.Get("Accept"), r.Header.Get("X-Custom"), r.Host
		fmt.Fprint(w, "fine")
	})
	mux.HandleFunc("/missing", http.NotFound)
	mux.HandleFunc("/error", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
	mux.HandleFunc("/redirect-here", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ok", http.StatusFound) })
	mux.HandleFunc("/redirect-away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://elsewhere.invalid/", http.StatusFound)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, strings.Repeat("x", 100<<10)) })
	mux.HandleFunc("/slow", func(w http.ResponseWriter, _ *http.Request) { time.Sleep(2 * time.Second) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	tlsSrv := httptest.NewTLSServer(mux)
	defer tlsSrv.Close()

	host, port := hostPort(t, srv.URL)
	tlsHost, tlsPort := hostPort(t, tlsSrv.URL)
	client := NewHTTPClient()
	tests := []struct {
		name     string
		action   v1.HTTPGetAction
		podIP    string
		timeout  time.Duration
		want     Outcome
		wantText string
	}{
		{name: "200 on the pod IP", action: v1.HTTPGetAction{Path: "/ok", Port: intstr.FromInt32(int32(port))}, podIP: host, want: OutcomeSuccess, wantText: "fine"},
		{name: "named port and host", action: v1.HTTPGetAction{Path: "/ok", Host: host, Port: intstr.FromString("http")}, podIP: "192.0.2.1", want: OutcomeSuccess, wantText: "fine"},
		{name: "404", action: v1.HTTPGetAction{Path: "/missing", Port: intstr.FromInt32(int32(port))}, podIP: host, want: OutcomeFailure, wantText: "HTTP probe failed with statuscode: 404"},
		{name: "503", action: v1.HTTPGetAction{Path: "/error", Port: intstr.FromInt32(int32(port))}, podIP: host, want: OutcomeFailure, wantText: "HTTP probe failed with statuscode: 503"},
		{name: "redirect to the same host is followed", action: v1.HTTPGetAction{Path: "/redirect-here", Port: intstr.FromInt32(int32(port))}, podIP: host, want: OutcomeSuccess, wantText: "fine"},
		{name: "redirect to another host is a warning", action: v1.HTTPGetAction{Path: "/redirect-away", Port: intstr.FromInt32(int32(port))}, podIP: host, want: OutcomeWarning, wantText: "Probe terminated redirects, Response body: "},
		{name: "HTTPS without verification", action: v1.HTTPGetAction{Path: "/ok", Scheme: v1.URISchemeHTTPS, Port: intstr.FromInt32(int32(tlsPort))}, podIP: tlsHost, want: OutcomeSuccess, wantText: "fine"},
		{name: "body capped at 10 KiB", action: v1.HTTPGetAction{Path: "/big", Port: intstr.FromInt32(int32(port))}, podIP: host, want: OutcomeSuccess, wantText: strings.Repeat("x", 10<<10)},
		{name: "timeout", action: v1.HTTPGetAction{Path: "/slow", Port: intstr.FromInt32(int32(port))}, podIP: host, timeout: 200 * time.Millisecond, want: OutcomeFailure, wantText: "Client.Timeout exceeded"},
		{name: "connection refused", action: v1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(1)}, podIP: "127.0.0.1", want: OutcomeFailure, wantText: "connection refused"},
	}
	c := &v1.Container{Ports: []v1.ContainerPort{{Name: "http", ContainerPort: int32(port)}}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := NewHTTPGetRequest(&tc.action, c, tc.podIP, "probe")
			if err != nil {
				t.Fatal(err)
			}
			timeout := tc.timeout
			if timeout == 0 {
				timeout = 5 * time.Second
			}
			got, text, err := client.Do(req, timeout)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want || !strings.Contains(text, tc.wantText) {
				t.Fatalf("got %s %q, want %s containing %q", got, text, tc.want, tc.wantText)
			}
			if tc.name == "body capped at 10 KiB" && len(text) != 10<<10 {
				t.Fatalf("read %d bytes of the body, want %d", len(text), 10<<10)
			}
		})
	}
	if gotAgent != "kube-probe/1.37" || gotAccept != "*/*" {
		t.Fatalf("User-Agent %q Accept %q, want kube-probe/1.37 and */*", gotAgent, gotAccept)
	}

	// Headers of the action are sent; Host sets the request's host; an explicit User-Agent wins.
	action := v1.HTTPGetAction{Path: "/ok", Port: intstr.FromInt32(int32(port)), HTTPHeaders: []v1.HTTPHeader{
		{Name: "X-Custom", Value: "yes"}, {Name: "Host", Value: "example.test"}, {Name: "User-Agent", Value: "mine"},
	}}
	req, err := NewHTTPGetRequest(&action, c, host, "probe")
	if err != nil {
		t.Fatal(err)
	}
	if o, _, _ := client.Do(req, 5*time.Second); o != OutcomeSuccess {
		t.Fatalf("with headers: %s", o)
	}
	if gotHeader != "yes" || gotHost != "example.test" || gotAgent != "mine" {
		t.Fatalf("X-Custom %q Host %q User-Agent %q", gotHeader, gotHost, gotAgent)
	}
	if _, err := NewHTTPGetRequest(&v1.HTTPGetAction{Port: intstr.FromString("nope")}, c, host, "probe"); err == nil {
		t.Fatalf("unknown named port: no error")
	}
	if UserAgent("lifecycle") != "kube-lifecycle/1.37" {
		t.Fatalf("lifecycle user agent %q", UserAgent("lifecycle"))
	}
}

func TestTCPSocket(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	if o, _ := TCPSocket("127.0.0.1", port, time.Second); o != OutcomeSuccess {
		t.Fatalf("open port: %s", o)
	}
	l.Close()
	if o, text := TCPSocket("127.0.0.1", port, time.Second); o != OutcomeFailure || !strings.Contains(text, "connection refused") {
		t.Fatalf("closed port: %s %q", o, text)
	}
}

func TestGRPC(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	hs := health.NewServer()
	hs.SetServingStatus("up", healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus("down", healthpb.HealthCheckResponse_NOT_SERVING)
	var agent string
	gs := grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		agent = userAgentOf(ctx)
		return h(ctx, req)
	}))
	healthpb.RegisterHealthServer(gs, hs)
	go func() { _ = gs.Serve(l) }()
	defer gs.Stop()

	tests := []struct {
		service, want string
		outcome       Outcome
	}{
		{"", "service healthy", OutcomeSuccess},
		{"up", "service healthy", OutcomeSuccess},
		{"down", `service unhealthy (responded with "NOT_SERVING")`, OutcomeFailure},
		{"unknown", "error: health rpc probe failed: ", OutcomeFailure},
	}
	for _, tc := range tests {
		o, text := GRPC("127.0.0.1", tc.service, port, 2*time.Second)
		if o != tc.outcome || !strings.HasPrefix(text, tc.want) {
			t.Errorf("service %q: %s %q, want %s %q", tc.service, o, text, tc.outcome, tc.want)
		}
	}
	if !strings.HasPrefix(agent, "kube-probe/1.37") {
		t.Errorf("User-Agent %q", agent)
	}
	gs.Stop()
	if o, text := GRPC("127.0.0.1", "", port, 300*time.Millisecond); o != OutcomeFailure || !strings.HasPrefix(text, "timeout: failed to connect service") {
		t.Errorf("stopped server: %s %q", o, text)
	}
}

func TestExec(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		want   Outcome
		errors bool
		text   string
	}{
		{name: "exit 0", want: OutcomeSuccess},
		{name: "exit 1", err: utilexec.CodeExitError{Err: errors.New("exit 1"), Code: 1}, want: OutcomeFailure},
		{name: "timeout", err: fmt.Errorf("%w: %q timed out after 1s", remote.ErrCommandTimedOut, "sleep 5"), want: OutcomeFailure, text: "command timed out"},
		{name: "runtime error", err: errors.New("container not found"), want: OutcomeUnknown, errors: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rt := critest.NewFakeRuntimeService()
			if tc.err != nil {
				rt.InjectError("ExecSync", tc.err)
			}
			o, text, err := Exec(context.Background(), rt, "id", []string{"true"}, time.Second)
			if o != tc.want || (err != nil) != tc.errors || !strings.Contains(text, tc.text) {
				t.Fatalf("got %s %q %v", o, text, err)
			}
		})
	}
}

func TestResolvePort(t *testing.T) {
	c := &v1.Container{Ports: []v1.ContainerPort{{Name: "web", ContainerPort: 8080}}}
	for _, tc := range []struct {
		port intstr.IntOrString
		want int
		ok   bool
	}{
		{intstr.FromInt32(80), 80, true},
		{intstr.FromString("web"), 8080, true},
		{intstr.FromString("other"), 0, false},
		{intstr.FromInt32(0), 0, false},
		{intstr.FromInt32(70000), 0, false},
	} {
		got, err := ResolvePort(tc.port, c)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("%v: %d %v", tc.port.String(), got, err)
		}
	}
}

func userAgentOf(ctx context.Context) string {
	md, _ := metadata.FromIncomingContext(ctx)
	if v := md.Get("user-agent"); len(v) > 0 {
		return v[0]
	}
	return ""
}
