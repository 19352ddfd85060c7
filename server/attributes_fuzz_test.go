package server

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"k8s.io/apiserver/pkg/authentication/user"
)

// streamingPatterns are the routes whose handlers run commands in, read from or connect to a
// pod's containers: only nodes/proxy may open them (the kubelet's default case).
var streamingPatterns = []string{"/containerLogs/", "/exec/", "/attach/", "/portForward/", "/run/"}

// FuzzRequestAttributes maps fuzzed requests to authorization attributes. Every request gets
// one or two checks on the node's nodes resource with the method's verb and the request's
// path; the last is a coarse subresource, the first (when there are two) a fine-grained one;
// and a request that the kubelet API's mux would hand to a streaming route is checked against
// nodes/proxy alone, however its path is spelled. Seeds: testdata/fuzz/FuzzRequestAttributes.
func FuzzRequestAttributes(f *testing.F) {
	coarseSet := map[string]bool{"proxy": true}
	for _, ps := range coarse {
		coarseSet[ps.subresource] = true
	}
	fineSet := map[string]bool{}
	for _, ps := range fineGrained {
		fineSet[ps.subresource] = true
	}
	// The mux answers a path that is not in its canonical form ("/stats/../exec/...") with a
	// redirect and runs no handler: the redirected request is checked again.
	var reached string
	mux := http.NewServeMux()
	for _, p := range streamingPatterns {
		mux.Handle(p, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached = p }))
	}
	u := &user.DefaultInfo{Name: "fuzz"}
	f.Fuzz(func(t *testing.T, method, rawPath string) {
		if !strings.HasPrefix(rawPath, "/") {
			rawPath = "/" + rawPath
		}
		pu, err := url.ParseRequestURI(rawPath)
		if err != nil || method == "" || strings.ContainsAny(method, " \t\r\n/") {
			return
		}
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Method = method
		r.URL = pu
		attrs := requestAttributes("node-1", u, r)
		if len(attrs) == 0 || len(attrs) > 2 {
			t.Fatalf("%s %q: %d checks", method, rawPath, len(attrs))
		}
		var subs []string
		for _, a := range attrs {
			if a.GetResource() != "nodes" || a.GetName() != "node-1" || a.GetAPIVersion() != "v1" || !a.IsResourceRequest() ||
				a.GetPath() != pu.Path || a.GetVerb() != verbs[method] || a.GetUser() != u || a.GetNamespace() != "" {
				t.Fatalf("%s %q: check %+v", method, rawPath, a)
			}
			subs = append(subs, a.GetSubresource())
		}
		if !coarseSet[subs[len(subs)-1]] || (len(subs) == 2 && !fineSet[subs[0]]) {
			t.Fatalf("%s %q: subresources %v", method, rawPath, subs)
		}
		reached = ""
		mux.ServeHTTP(httptest.NewRecorder(), r)
		if reached != "" && (len(subs) != 1 || subs[0] != "proxy") {
			t.Fatalf("%s %q reaches %s with subresources %v, want [proxy]", method, rawPath, reached, subs)
		}
	})
}
