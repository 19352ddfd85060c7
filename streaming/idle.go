package streaming

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"time"
)

// withIdleTimeout makes the connection a handler hijacks close once no data went either way
// for d: the runtime's own streaming server has such a timeout too, but vk-cri's must not be
// shorter than what the node promises (the kubelet's streamingConnectionIdleTimeout).
func withIdleTimeout(w http.ResponseWriter, d time.Duration) http.ResponseWriter {
	if d <= 0 {
		return w
	}
	if _, ok := w.(http.Hijacker); !ok {
		return w
	}
	return &idleResponseWriter{ResponseWriter: w, idle: d}
}

type idleResponseWriter struct {
	http.ResponseWriter
	idle time.Duration
}

// Hijack hands out the connection with its deadline pushed forward by every read and write.
// Readers and writers of the returned buffer go through the same connection.
func (w *idleResponseWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, fmt.Errorf("the response cannot be hijacked")
	}
	conn, brw, err := hj.Hijack()
	if err != nil {
		return nil, nil, err
	}
	ic := &idleConn{Conn: conn, buffered: brw.Reader, idle: w.idle}
	ic.touch()
	return ic, bufio.NewReadWriter(bufio.NewReader(ic), bufio.NewWriter(ic)), nil
}

// idleConn is a connection that times out after a period without traffic.
type idleConn struct {
	net.Conn
	// buffered holds what the HTTP server read ahead of the request, before the connection.
	buffered *bufio.Reader
	idle     time.Duration
}

func (c *idleConn) touch() {
	_ = c.Conn.SetDeadline(time.Now().Add(c.idle))
}

func (c *idleConn) Read(p []byte) (int, error) {
	n, err := c.buffered.Read(p)
	if n > 0 {
		c.touch()
	}
	return n, err
}

func (c *idleConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if n > 0 {
		c.touch()
	}
	return n, err
}
