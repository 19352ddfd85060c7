package server

import (
	"net/http"
	"strings"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// verbs maps HTTP methods to the API verbs the kubelet authorizes; other methods get no verb.
var verbs = map[string]string{
	http.MethodPost:   "create",
	http.MethodGet:    "get",
	http.MethodPut:    "update",
	http.MethodPatch:  "patch",
	http.MethodDelete: "delete",
}

// pathSubresource ties a kubelet API path (and everything under it) to a nodes subresource.
type pathSubresource struct {
	path        string
	subresource string
}

// fineGrained are the subresources the kubelet checks first (KubeletFineGrainedAuthz, on by
// default since v1.36); the coarse subresource is checked after them, so that a caller with
// nodes/proxy keeps the access it had before.
var fineGrained = []pathSubresource{
	{"/allocatedPods", "pods"},
	{"/pods", "pods"},
	{"/healthz", "healthz"},
	{"/configz", "configz"},
	{"/runningpods/", "pods"},
}

// coarse is the subresource every request is checked against when no fine-grained one allows
// it; paths listed nowhere need nodes/proxy (exec, attach, portForward, containerLogs, run ...).
var coarse = []pathSubresource{
	{"/stats/", "stats"},
	{"/metrics", "metrics"},
	{"/logs/", "log"},
	{"/checkpoint/", "checkpoint"},
	{"/statusz", "statusz"},
	{"/flagz", "configz"},
}

// underPath reports whether p is base or lies below it (base's trailing slash is ignored).
func underPath(p, base string) bool {
	base = strings.TrimSuffix(base, "/")
	return p == base || strings.HasPrefix(p, base+"/")
}

// subresources lists, in the order they are checked, the nodes subresources that may admit a
// request for path.
func subresources(path string) []string {
	var out []string
	for _, ps := range fineGrained {
		if underPath(path, ps.path) {
			out = append(out, ps.subresource)
			break
		}
	}
	for _, ps := range coarse {
		if underPath(path, ps.path) {
			return append(out, ps.subresource)
		}
	}
	return append(out, "proxy")
}

// requestAttributes are the authorization checks for one request to node's kubelet API: the
// request is allowed if any of them is.
func requestAttributes(node string, u user.Info, r *http.Request) []authorizer.Attributes {
	subs := subresources(r.URL.Path)
	attrs := make([]authorizer.Attributes, 0, len(subs))
	for _, sub := range subs {
		attrs = append(attrs, authorizer.AttributesRecord{
			User:            u,
			Verb:            verbs[r.Method],
			APIVersion:      "v1",
			Resource:        "nodes",
			Subresource:     sub,
			Name:            node,
			ResourceRequest: true,
			Path:            r.URL.Path,
		})
	}
	return attrs
}
