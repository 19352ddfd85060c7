package server

import (
	"fmt"
	"net/http"
	"time"

	"github.com/sirupsen/logrus"
	"k8s.io/apimachinery/pkg/util/wait"
	apiserverconfig "k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/client-go/kubernetes"
)

// Authorization modes of the kubelet API, named as the kubelet's --authorization-mode values.
const (
	AuthorizationWebhook     = "Webhook"
	AuthorizationAlwaysAllow = "AlwaysAllow"
)

// AuthConfig is how callers of the kubelet API are identified and authorised; the defaults
// (DefaultAuthConfig) are the kubelet's.
type AuthConfig struct {
	// ClientCAFile authenticates client certificates signed by it; empty: no x509 authentication.
	ClientCAFile string
	// Anonymous lets requests without credentials through as system:anonymous (then authorised
	// like anyone else). Off unless asked for.
	Anonymous bool
	// TokenWebhook authenticates bearer tokens with TokenReviews; TokenCacheTTL caches answers.
	TokenWebhook  bool
	TokenCacheTTL time.Duration
	// AuthorizationMode is Webhook (SubjectAccessReviews, answers cached for AuthorizedTTL and
	// UnauthorizedTTL) or AlwaysAllow.
	AuthorizationMode string
	AuthorizedTTL     time.Duration
	UnauthorizedTTL   time.Duration
}

// DefaultAuthConfig returns the kubelet's defaults, except that anonymous requests are refused.
func DefaultAuthConfig() AuthConfig {
	return AuthConfig{
		TokenWebhook:      true,
		TokenCacheTTL:     2 * time.Minute,
		AuthorizationMode: AuthorizationWebhook,
		AuthorizedTTL:     5 * time.Minute,
		UnauthorizedTTL:   30 * time.Second,
	}
}

// Validate reports settings that cannot work.
func (c AuthConfig) Validate() error {
	switch c.AuthorizationMode {
	case AuthorizationWebhook, AuthorizationAlwaysAllow:
	default:
		return fmt.Errorf("authorization mode must be %s or %s, not %q", AuthorizationWebhook, AuthorizationAlwaysAllow, c.AuthorizationMode)
	}
	if c.ClientCAFile == "" && !c.TokenWebhook && !c.Anonymous {
		return fmt.Errorf("no way to authenticate callers: give a client CA, enable token webhook authentication or allow anonymous requests")
	}
	return nil
}

// Auth authenticates and authorises requests to one node's kubelet API.
type Auth struct {
	node     string
	authn    authenticator.Request
	authz    authorizer.Authorizer
	clientCA dynamiccertificates.CAContentProvider
	log      *logrus.Entry
}

// NewAuth builds the authenticator and authoriser of cfg, delegating tokens and decisions to the
// API server through client (k8s.io/apiserver's delegating factories, as the kubelet does).
func NewAuth(node string, cfg AuthConfig, client kubernetes.Interface, log *logrus.Entry) (*Auth, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	a := &Auth{node: node, log: log}
	authnCfg := authenticatorfactory.DelegatingAuthenticatorConfig{
		Anonymous:                &apiserverconfig.AnonymousAuthConfig{Enabled: cfg.Anonymous},
		CacheTTL:                 cfg.TokenCacheTTL,
		TokenAccessReviewTimeout: 10 * time.Second,
		WebhookRetryBackoff:      webhookBackoff(),
	}
	if cfg.ClientCAFile != "" {
		ca, err := dynamiccertificates.NewDynamicCAContentFromFile("client-ca-bundle", cfg.ClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("client CA %s: %w", cfg.ClientCAFile, err)
		}
		a.clientCA = ca
		authnCfg.ClientCertificateCAContentProvider = ca
	}
	if cfg.TokenWebhook {
		authnCfg.TokenAccessReviewClient = client.AuthenticationV1()
	}
	var err error
	if a.authn, _, err = authnCfg.New(); err != nil {
		return nil, fmt.Errorf("kubelet API authenticator: %w", err)
	}
	switch cfg.AuthorizationMode {
	case AuthorizationAlwaysAllow:
		a.authz = authorizerfactory.NewAlwaysAllowAuthorizer()
	case AuthorizationWebhook:
		a.authz, err = authorizerfactory.DelegatingAuthorizerConfig{
			SubjectAccessReviewClient: client.AuthorizationV1(),
			AllowCacheTTL:             cfg.AuthorizedTTL,
			DenyCacheTTL:              cfg.UnauthorizedTTL,
			WebhookRetryBackoff:       webhookBackoff(),
		}.New()
		if err != nil {
			return nil, fmt.Errorf("kubelet API authorizer: %w", err)
		}
	}
	return a, nil
}

// Wrap admits a request to h only if its caller is authenticated and allowed one of the
// request's authorization attributes; it answers 401 and 403 with the kubelet's messages.
func (a *Auth) Wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resp, ok, err := a.authn.AuthenticateRequest(r)
		if err != nil || !ok {
			if err != nil {
				a.log.WithError(err).WithField("path", r.URL.Path).Debug("kubelet API: authentication failed")
			}
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		attrs := requestAttributes(a.node, resp.User, r)
		subs := make([]string, 0, len(attrs))
		for _, attr := range attrs {
			subs = append(subs, attr.GetSubresource())
			decision, _, err := a.authz.Authorize(r.Context(), attr)
			if err != nil {
				a.log.WithError(err).WithFields(logrus.Fields{"user": resp.User.GetName(), "verb": attr.GetVerb(), "subresource": attr.GetSubresource()}).Warn("kubelet API: authorization error")
				http.Error(w, fmt.Sprintf("Authorization error (user=%s, verb=%s, resource=%s, subresource=%s)",
					resp.User.GetName(), attr.GetVerb(), attr.GetResource(), attr.GetSubresource()), http.StatusInternalServerError)
				return
			}
			if decision == authorizer.DecisionAllow {
				h.ServeHTTP(w, r.WithContext(request.WithUser(r.Context(), resp.User)))
				return
			}
		}
		a.log.WithFields(logrus.Fields{"user": resp.User.GetName(), "verb": attrs[0].GetVerb(), "subresources": subs, "path": r.URL.Path}).Debug("kubelet API: forbidden")
		http.Error(w, fmt.Sprintf("Forbidden (user=%s, verb=%s, resource=%s, subresource(s)=%v)",
			resp.User.GetName(), attrs[0].GetVerb(), attrs[0].GetResource(), subs), http.StatusForbidden)
	})
}

// webhookBackoff retries TokenReviews and SubjectAccessReviews that fail for transient reasons
// (the API server's own default for delegated authn/authz).
func webhookBackoff() *wait.Backoff {
	b := webhook.DefaultRetryBackoffWithInitialDelay(500 * time.Millisecond)
	return &b
}
