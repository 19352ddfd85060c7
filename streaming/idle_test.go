package streaming

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"
)

// hijackable is a ResponseWriter whose connection is one end of a pipe.
type hijackable struct {
	http.ResponseWriter
	conn net.Conn
}

func (h *hijackable) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return h.conn, bufio.NewReadWriter(bufio.NewReader(h.conn), bufio.NewWriter(h.conn)), nil
}

func TestIdleTimeoutClosesASilentConnection(t *testing.T) {
	server, client := net.Pipe()
	defer client.Close()
	w := withIdleTimeout(&hijackable{ResponseWriter: httptest.NewRecorder(), conn: server}, 300*time.Millisecond)
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		t.Fatal(err)
	}
	// Traffic in either direction keeps it open past the timeout.
	go func() {
		buf := make([]byte, 1)
		for i := 0; i < 6; i++ {
			_, _ = client.Write([]byte("x"))
			_, _ = client.Read(buf)
		}
	}()
	buf := make([]byte, 1)
	for i := 0; i < 6; i++ {
		if _, err := conn.Read(buf); err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
		time.Sleep(100 * time.Millisecond) // busy: 6 × 100 ms is past the 300 ms timeout
		if _, err := conn.Write(buf); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	// Then silence ends it.
	start := time.Now()
	_, err = conn.Read(buf)
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read on a silent connection: %v, want a deadline error", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("silent connection closed after %v", d)
	}
}

func TestNoIdleTimeoutLeavesTheWriterAlone(t *testing.T) {
	rec := httptest.NewRecorder()
	if w := withIdleTimeout(rec, 0); w != rec {
		t.Error("a zero timeout wrapped the writer")
	}
	var _ io.Writer = rec
}
