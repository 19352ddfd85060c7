package server

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
)

func TestConnectionLimitsAreTheKubelets(t *testing.T) {
	want := connectionLimits{ReadHeader: 30 * time.Second, Read: 4 * time.Hour, Write: 4 * time.Hour, Idle: 90 * time.Second, MaxHeaderBytes: 1 << 20}
	s := testServer(t)
	if s.limits != want {
		t.Errorf("limits %+v, want %+v", s.limits, want)
	}
	var srv http.Server
	want.apply(&srv)
	if srv.ReadHeaderTimeout != want.ReadHeader || srv.ReadTimeout != want.Read || srv.WriteTimeout != want.Write ||
		srv.IdleTimeout != want.Idle || srv.MaxHeaderBytes != want.MaxHeaderBytes {
		t.Errorf("applied: read header %v, read %v, write %v, idle %v, max header bytes %d",
			srv.ReadHeaderTimeout, srv.ReadTimeout, srv.WriteTimeout, srv.IdleTimeout, srv.MaxHeaderBytes)
	}
}

// testServer is a kubelet API server with a self-signed certificate that admits nobody (every
// request is 401), which is all a connection-level test needs.
func testServer(t *testing.T) *Server {
	t.Helper()
	cert, err := SelfSignedCertificate("127.0.0.1", []net.IP{net.ParseIP("127.0.0.1")})
	if err != nil {
		t.Fatal(err)
	}
	auth := &Auth{node: "node-1", authn: tokenUsers, authz: grants(), log: logrus.NewEntry(logrus.New())}
	s, err := New("127.0.0.1:0", cert, auth, WithLogger(logrus.NewEntry(logrus.New())))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// start serves s on a loopback port until the test ends.
func start(t *testing.T, s *Server) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.serveOn(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serving: %v", err)
		}
	})
	return l.Addr().String()
}

func dialHTTP1(t *testing.T, addr string) *tls.Conn {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}}) //nolint:gosec // a throwaway self-signed certificate
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// A kept-alive connection that sends nothing after its request is closed by the server once
// its idle timeout passes (without one it stays open for good: nothing bounded idle TLS
// connections).
func TestIdleConnectionIsClosed(t *testing.T) {
	s := testServer(t)
	s.limits.Idle = 200 * time.Millisecond
	conn := dialHTTP1(t, start(t, s))
	if _, err := io.WriteString(conn, "GET /pods HTTP/1.1\r\nHost: node\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || resp.Close {
		t.Fatalf("first answer %d (close %v), want a kept-alive 401", resp.StatusCode, resp.Close)
	}
	const patience = 10 * time.Second
	if err := conn.SetReadDeadline(time.Now().Add(patience)); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	_, err = br.ReadByte()
	if !errors.Is(err, io.EOF) {
		t.Fatalf("idle connection: read gave %v after %v, want the server to close it (EOF)", err, time.Since(begin))
	}
}

// Headers beyond the limit get 431 (net/http's answer, as the kubelet's); below it the request
// reaches the handler.
func TestOversizedHeadersGet431(t *testing.T) {
	s := testServer(t)
	addr := start(t, s)
	for _, tc := range []struct {
		size int
		want int
	}{
		{s.limits.MaxHeaderBytes / 2, http.StatusUnauthorized},
		{s.limits.MaxHeaderBytes + 64<<10, http.StatusRequestHeaderFieldsTooLarge},
		{4 * s.limits.MaxHeaderBytes, http.StatusRequestHeaderFieldsTooLarge},
	} {
		conn := dialHTTP1(t, addr)
		// The server may answer and close before it has read everything: write aside.
		go func() {
			_, _ = io.WriteString(conn, "GET /pods HTTP/1.1\r\nHost: node\r\nX-Big: "+strings.Repeat("a", tc.size)+"\r\n\r\n")
		}()
		if err := conn.SetReadDeadline(time.Now().Add(30 * time.Second)); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("header of %d bytes: %v", tc.size, err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("header of %d bytes: %d, want %d", tc.size, resp.StatusCode, tc.want)
		}
	}
}
