package server

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/request"
)

// tokenUsers authenticates "Bearer <name>" as user <name>; "Bearer broken" fails with an error.
var tokenUsers = authenticator.RequestFunc(func(r *http.Request) (*authenticator.Response, bool, error) {
	name, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	switch {
	case !ok:
		return nil, false, nil
	case name == "broken":
		return nil, false, errors.New("token review failed")
	}
	return &authenticator.Response{User: &user.DefaultInfo{Name: name}}, true, nil
})

// grants allows user:subresource pairs; user "sar-down" gets an authorization error.
func grants(allowed ...string) authorizer.Authorizer {
	return authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		if a.GetUser().GetName() == "sar-down" {
			return authorizer.DecisionNoOpinion, "", errors.New("SubjectAccessReview failed")
		}
		for _, g := range allowed {
			if g == a.GetUser().GetName()+":"+a.GetSubresource() {
				return authorizer.DecisionAllow, "", nil
			}
		}
		return authorizer.DecisionNoOpinion, "", nil
	})
}

func TestAuthWrap(t *testing.T) {
	auth := &Auth{node: "node-1", authn: tokenUsers, authz: grants("proxy-user:proxy", "pods-user:pods", "log-user:log"), log: logrus.NewEntry(logrus.New())}
	h := auth.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, _ := request.UserFrom(r.Context())
		_, _ = w.Write([]byte("served for " + u.GetName()))
	}))
	tests := []struct {
		name, method, path, token string
		code                      int
		body                      string
	}{
		{"no credentials", "GET", "/pods", "", 401, "Unauthorized\n"},
		{"authentication error", "GET", "/pods", "broken", 401, "Unauthorized\n"},
		{"no rights", "GET", "/pods", "nobody", 403, "Forbidden (user=nobody, verb=get, resource=nodes, subresource(s)=[pods proxy])\n"},
		{"fine-grained", "GET", "/pods", "pods-user", 200, "served for pods-user"},
		{"proxy fallback", "GET", "/pods", "proxy-user", 200, "served for proxy-user"},
		{"proxy for exec", "POST", "/exec/ns/p/c", "proxy-user", 200, "served for proxy-user"},
		{"pods is not exec", "POST", "/exec/ns/p/c", "pods-user", 403, "Forbidden (user=pods-user, verb=create, resource=nodes, subresource(s)=[proxy])\n"},
		{"log is not exec", "POST", "/exec/ns/p/c", "log-user", 403, "Forbidden (user=log-user, verb=create, resource=nodes, subresource(s)=[proxy])\n"},
		{"node logs need log", "GET", "/logs/messages", "log-user", 200, "served for log-user"},
		{"proxy does not give stats", "GET", "/stats/summary", "proxy-user", 403, "Forbidden (user=proxy-user, verb=get, resource=nodes, subresource(s)=[stats])\n"},
		{"authorization error", "GET", "/pods", "sar-down", 500, "Authorization error (user=sar-down, verb=get, resource=nodes, subresource=pods)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, tt.path, nil)
			if tt.token != "" {
				r.Header.Set("Authorization", "Bearer "+tt.token)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tt.code || w.Body.String() != tt.body {
				t.Errorf("got %d %q, want %d %q", w.Code, w.Body.String(), tt.code, tt.body)
			}
		})
	}
}

func TestAuthConfigValidate(t *testing.T) {
	if err := DefaultAuthConfig().Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
	c := DefaultAuthConfig()
	c.TokenWebhook = false
	if err := c.Validate(); err == nil {
		t.Error("no authenticator accepted")
	}
	c.ClientCAFile = "ca.crt"
	c.AuthorizationMode = "RBAC"
	if err := c.Validate(); err == nil {
		t.Error("unknown authorization mode accepted")
	}
}
