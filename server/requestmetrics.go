package server

import (
	"net/http"
	"strings"
)

// RequestRecorder counts kubelet API requests (kubelet_http_requests_total and friends); the
// returned function ends the request's observation.
type RequestRecorder interface {
	HTTPRequest(method, path, serverType string, longRunning bool) (finished func())
}

// WithRequestMetrics reports every request, authorised or not, to r.
func WithRequestMetrics(r RequestRecorder) Option { return func(s *Server) { s.requests = r } }

// knownMethods are the methods counted under their own name; others count as "other".
var knownMethods = map[string]bool{"OPTIONS": true, "GET": true, "HEAD": true, "POST": true, "PUT": true, "DELETE": true, "TRACE": true, "CONNECT": true}

// longRunningRoots are the path roots the kubelet counts as long-running. Its list spells
// "portforward" in lower case, so port-forward requests (root "portForward") are not among
// them; vk-cri reports the same labels.
var longRunningRoots = map[string]bool{"exec": true, "attach": true, "portforward": true, "debug": true}

// urlRoot is a path's metrics bucket: its first segment, or two for /metrics/<x>.
func urlRoot(path string) string {
	parts := strings.SplitN(strings.TrimPrefix(path, "/"), "/", 3)
	if parts[0] == "metrics" && len(parts) > 1 && parts[1] != "" {
		return parts[0] + "/" + parts[1]
	}
	return parts[0]
}

// instrument wraps h so that each request is counted under its method and route root;
// requests outside the registered routes count as path "other".
func instrument(r RequestRecorder, patterns []string, h http.Handler) http.Handler {
	buckets := map[string]bool{}
	for _, p := range patterns {
		buckets[urlRoot(p)] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		method, path := req.Method, urlRoot(req.URL.Path)
		if !knownMethods[method] {
			method = "other"
		}
		if !buckets[path] {
			path = "other"
		}
		finished := r.HTTPRequest(method, path, "readwrite", longRunningRoots[path])
		defer finished()
		h.ServeHTTP(w, req)
	})
}
