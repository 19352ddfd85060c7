//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// probeSwitches are probe targets the test controls, served on the node's IP: each named
// switch answers healthy or not over HTTP (GET /<name>: 200 or 500), TCP (its own port: accepting
// or refused) and gRPC (grpc.health.v1, service <name>: SERVING or NOT_SERVING). Probes reach
// them with the probe's host field (httpGet, tcpSocket), with nc from the container (exec) or
// through a host-network pod (grpc, whose target is always the pod IP). Each switch counts the
// probes it answered, so a test can tell which probes ran.
type probeSwitches struct {
	t      *testing.T
	ip     string
	mu     sync.Mutex
	ok     map[string]bool
	hits   map[string]int
	agents map[string]string // last User-Agent seen per HTTP switch
	header map[string]string // last X-Probe header per HTTP switch

	httpPort int
	grpcPort int
	health   *health.Server
	tcp      map[string]*tcpSwitch
}

type tcpSwitch struct {
	addr string
	l    net.Listener
}

func newProbeSwitches(t *testing.T) *probeSwitches {
	t.Helper()
	sw := &probeSwitches{t: t, ip: s.env["NODE_IP"], ok: map[string]bool{}, hits: map[string]int{},
		agents: map[string]string{}, header: map[string]string{}, tcp: map[string]*tcpSwitch{}}
	hl, err := net.Listen("tcp", net.JoinHostPort(sw.ip, "0"))
	if err != nil {
		t.Fatalf("listening for HTTP probes: %v", err)
	}
	sw.httpPort = hl.Addr().(*net.TCPAddr).Port
	srv := &http.Server{Handler: http.HandlerFunc(sw.serveHTTP)}
	go func() { _ = srv.Serve(hl) }()
	t.Cleanup(func() { _ = srv.Close() })

	gl, err := net.Listen("tcp", net.JoinHostPort(sw.ip, "0"))
	if err != nil {
		t.Fatalf("listening for gRPC probes: %v", err)
	}
	sw.grpcPort = gl.Addr().(*net.TCPAddr).Port
	sw.health = health.NewServer()
	gs := grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		if r, ok := req.(*healthpb.HealthCheckRequest); ok {
			sw.hit(r.Service)
		}
		return h(ctx, req)
	}))
	healthpb.RegisterHealthServer(gs, sw.health)
	go func() { _ = gs.Serve(gl) }()
	t.Cleanup(gs.Stop)
	return sw
}

func (sw *probeSwitches) serveHTTP(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/")
	sw.hit(name)
	sw.mu.Lock()
	ok := sw.ok[name]
	sw.agents[name] = r.UserAgent()
	sw.header[name] = r.Header.Get("X-Probe")
	sw.mu.Unlock()
	if !ok {
		http.Error(w, "switched off", http.StatusInternalServerError)
		return
	}
	_, _ = w.Write([]byte("ok\n"))
}

func (sw *probeSwitches) hit(name string) {
	sw.mu.Lock()
	sw.hits[name]++
	sw.mu.Unlock()
}

// Hits is how many probes the switch answered.
func (sw *probeSwitches) Hits(name string) int {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return sw.hits[name]
}

// Set turns a switch healthy or not, on every protocol.
func (sw *probeSwitches) Set(name string, ok bool) {
	sw.t.Helper()
	sw.mu.Lock()
	sw.ok[name] = ok
	ts := sw.tcp[name]
	sw.mu.Unlock()
	st := healthpb.HealthCheckResponse_NOT_SERVING
	if ok {
		st = healthpb.HealthCheckResponse_SERVING
	}
	sw.health.SetServingStatus(name, st)
	if ts == nil {
		return
	}
	sw.mu.Lock()
	defer sw.mu.Unlock()
	switch {
	case ok && ts.l == nil:
		l, err := net.Listen("tcp", ts.addr)
		if err != nil {
			sw.t.Fatalf("reopening TCP switch %s: %v", name, err)
		}
		ts.l = l
		go sw.accept(name, l)
	case !ok && ts.l != nil:
		_ = ts.l.Close()
		ts.l = nil
	}
}

// tcpPort gives the switch a TCP port of its own (refusing connections until Set(name, true)).
func (sw *probeSwitches) tcpPort(name string) int {
	sw.t.Helper()
	sw.mu.Lock()
	if ts, ok := sw.tcp[name]; ok {
		sw.mu.Unlock()
		_, p, _ := net.SplitHostPort(ts.addr)
		n, _ := strconv.Atoi(p)
		return n
	}
	sw.mu.Unlock()
	l, err := net.Listen("tcp", net.JoinHostPort(sw.ip, "0"))
	if err != nil {
		sw.t.Fatalf("listening for TCP probes: %v", err)
	}
	ts := &tcpSwitch{addr: l.Addr().String()}
	_ = l.Close()
	sw.mu.Lock()
	sw.tcp[name] = ts
	ok := sw.ok[name]
	sw.mu.Unlock()
	sw.t.Cleanup(func() {
		sw.mu.Lock()
		defer sw.mu.Unlock()
		if ts.l != nil {
			_ = ts.l.Close()
		}
	})
	sw.Set(name, ok)
	return l.Addr().(*net.TCPAddr).Port
}

func (sw *probeSwitches) accept(name string, l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		sw.hit(name)
		_ = c.Close()
	}
}

// handler is a probe action of the given kind aimed at switch name.
func (sw *probeSwitches) handler(kind, name string) v1.ProbeHandler {
	switch kind {
	case "exec":
		// busybox-static's wget crashes in these containers; nc speaks enough HTTP. The host comes
		// from the container's env through $(PROBE_HOST), which vk-cri expands as the kubelet does
		// (unexpanded, the shell would run a command named PROBE_HOST and the probe would fail).
		script := fmt.Sprintf(`printf 'GET /%s HTTP/1.0\r\n\r\n' | nc -w 4 $(PROBE_HOST) %d | head -1 | grep -q ' 200 '`, name, sw.httpPort)
		return v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"sh", "-c", script}}}
	case "httpGet":
		return v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{
			Host: sw.ip, Port: intstr.FromInt32(int32(sw.httpPort)), Path: "/" + name,
			HTTPHeaders: []v1.HTTPHeader{{Name: "X-Probe", Value: name}},
		}}
	case "tcpSocket":
		return v1.ProbeHandler{TCPSocket: &v1.TCPSocketAction{Host: sw.ip, Port: intstr.FromInt32(int32(sw.tcpPort(name)))}}
	case "grpc":
		svc := name
		return v1.ProbeHandler{GRPC: &v1.GRPCAction{Port: int32(sw.grpcPort), Service: &svc}}
	}
	sw.t.Fatalf("unknown probe handler %q", kind)
	return v1.ProbeHandler{}
}
