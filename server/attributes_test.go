package server

import (
	"net/http/httptest"
	"reflect"
	"testing"

	"k8s.io/apiserver/pkg/authentication/user"
)

func TestRequestAttributes(t *testing.T) {
	tests := []struct {
		method, path string
		verb         string
		subresources []string
	}{
		{"GET", "/pods", "get", []string{"pods", "proxy"}},
		{"GET", "/pods/", "get", []string{"pods", "proxy"}},
		{"GET", "/podsx", "get", []string{"proxy"}},
		{"GET", "/runningpods/", "get", []string{"pods", "proxy"}},
		{"GET", "/healthz", "get", []string{"healthz", "proxy"}},
		{"GET", "/healthz/ping", "get", []string{"healthz", "proxy"}},
		{"GET", "/configz", "get", []string{"configz", "proxy"}},
		{"GET", "/stats/summary", "get", []string{"stats"}},
		{"GET", "/stats", "get", []string{"stats"}},
		{"GET", "/metrics", "get", []string{"metrics"}},
		{"GET", "/metrics/resource", "get", []string{"metrics"}},
		{"GET", "/metricsx", "get", []string{"proxy"}},
		{"GET", "/logs/syslog", "get", []string{"log"}},
		{"GET", "/containerLogs/ns/pod/c", "get", []string{"proxy"}},
		{"POST", "/exec/ns/pod/c", "create", []string{"proxy"}},
		{"GET", "/exec/ns/pod/c", "get", []string{"proxy"}},
		{"POST", "/portForward/ns/pod", "create", []string{"proxy"}},
		{"POST", "/checkpoint/ns/pod/c", "create", []string{"checkpoint"}},
		{"PUT", "/x", "update", []string{"proxy"}},
		{"PATCH", "/x", "patch", []string{"proxy"}},
		{"DELETE", "/x", "delete", []string{"proxy"}},
		{"HEAD", "/healthz", "", []string{"healthz", "proxy"}},
	}
	u := &user.DefaultInfo{Name: "alice"}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			attrs := requestAttributes("node-1", u, httptest.NewRequest(tt.method, tt.path, nil))
			var subs []string
			for _, a := range attrs {
				subs = append(subs, a.GetSubresource())
				if a.GetVerb() != tt.verb || a.GetResource() != "nodes" || a.GetName() != "node-1" ||
					a.GetAPIVersion() != "v1" || a.GetNamespace() != "" || !a.IsResourceRequest() ||
					a.GetUser().GetName() != "alice" || a.GetPath() != tt.path {
					t.Errorf("attributes %+v", a)
				}
			}
			if !reflect.DeepEqual(subs, tt.subresources) {
				t.Errorf("subresources %v, want %v", subs, tt.subresources)
			}
		})
	}
}
