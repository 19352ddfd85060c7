package server

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
)

type requestLog []string

func (l *requestLog) HTTPRequest(method, path, serverType string, longRunning bool) func() {
	*l = append(*l, fmt.Sprintf("%s %s %s %v", method, path, serverType, longRunning))
	return func() {}
}

func TestInstrumentBuckets(t *testing.T) {
	var log requestLog
	h := instrument(&log, []string{"/pods", "/exec/", "/portForward/", "/metrics", "/metrics/resource", "/healthz"},
		http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for _, r := range []struct{ method, path string }{
		{"GET", "/pods"}, {"POST", "/exec/ns/p/c"}, {"POST", "/portForward/ns/p"}, {"GET", "/metrics"},
		{"GET", "/metrics/resource"}, {"GET", "/metrics/cadvisor"}, {"GET", "/healthz/ping"}, {"BREW", "/nowhere"},
	} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(r.method, r.path, nil))
	}
	want := requestLog{
		"GET pods readwrite false", "POST exec readwrite true", "POST portForward readwrite false", "GET metrics readwrite false",
		"GET metrics/resource readwrite false", "GET other readwrite false", "GET healthz readwrite false", "other other readwrite false",
	}
	if !reflect.DeepEqual(log, want) {
		t.Errorf("got %q\nwant %q", log, want)
	}
}
