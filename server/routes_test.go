package server

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestRouteTableLaterRegistrationWins(t *testing.T) {
	text := func(s string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(s)) })
	}
	rt := newRouteTable()
	WithRoutes(
		func(m Mux) { m.Handle("/exec/", text("generic")); m.Handle("/pods", text("pods")) },
		func(m Mux) { m.Handle("/exec/", text("streaming")) },
	)(&Server{routes: rt})
	for path, want := range map[string]string{"/exec/ns/p/c": "streaming", "/pods": "pods", "/nothing": "404 page not found\n"} {
		w := httptest.NewRecorder()
		rt.mux().ServeHTTP(w, httptest.NewRequest("GET", path, nil))
		if w.Body.String() != want {
			t.Errorf("%s: %q, want %q", path, w.Body.String(), want)
		}
	}
}
