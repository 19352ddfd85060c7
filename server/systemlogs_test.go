package server

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSystemLogsRouteServesDirReadOnly(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "agent.log"), []byte("line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	SystemLogsRoute(dir)(mux)
	for _, tt := range []struct {
		method, path string
		code         int
		body         string
	}{
		{"GET", "/logs/agent.log", 200, "line\n"},
		{"GET", "/logs/missing.log", 404, ""},
		{"GET", "/logs/../../etc/passwd", 404, ""},
		{"POST", "/logs/agent.log", 405, ""},
	} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(tt.method, "/", nil)
		req.URL.Path = tt.path // unnormalised, as a hostile client would send it
		mux.ServeHTTP(rec, req)
		// A path that leaves the directory is never served: a 404, or the mux's redirect to
		// the cleaned path (outside /logs/).
		if rec.Code != tt.code && !(tt.code == 404 && (rec.Code == 301 || rec.Code == 307)) {
			t.Errorf("%s %s: %d, want %d", tt.method, tt.path, rec.Code, tt.code)
		}
		if tt.body != "" && rec.Body.String() != tt.body {
			t.Errorf("%s %s: body %q, want %q", tt.method, tt.path, rec.Body.String(), tt.body)
		}
	}
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", "/logs/", nil))
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "agent.log") {
		t.Errorf("GET /logs/: %d %q, want a listing with agent.log", rec.Code, rec.Body.String())
	}
}
