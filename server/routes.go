package server

import (
	"net/http"
	"sort"
)

// Mux is what route registrations attach handlers to. *http.ServeMux and virtual-kubelet's
// api.ServeMux both satisfy it.
type Mux interface {
	Handle(pattern string, handler http.Handler)
}

// Registrar attaches a group of routes (for example the streaming handlers, or the stats
// handlers) to the kubelet API. Patterns use http.ServeMux syntax.
type Registrar func(Mux)

// routeTable collects registrations; registering a pattern again replaces its handler, so that a
// later, more specific registrar (e.g. real streaming handlers) can take over a route that an
// earlier, generic one (virtual-kubelet's pod routes) also serves.
type routeTable struct {
	handlers map[string]http.Handler
}

func newRouteTable() *routeTable {
	return &routeTable{handlers: map[string]http.Handler{}}
}

func (t *routeTable) Handle(pattern string, h http.Handler) {
	t.handlers[pattern] = h
}

// patterns lists the registered patterns in order, for logs and tests.
func (t *routeTable) patterns() []string {
	out := make([]string, 0, len(t.handlers))
	for p := range t.handlers {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// mux builds the ServeMux that dispatches to the registered handlers; unknown paths get 404.
func (t *routeTable) mux() *http.ServeMux {
	m := http.NewServeMux()
	for _, p := range t.patterns() {
		m.Handle(p, t.handlers[p])
	}
	return m
}
