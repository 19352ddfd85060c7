package volumes

import (
	"context"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// maxTokenAge is the age after which a token is renewed whatever its lifetime, as the kubelet's
// token manager does.
const maxTokenAge = 24 * time.Hour

// tokenNeedsRefresh reports whether a token must be requested again: at 80 % of its lifetime or
// once it is older than a day.
func tokenNeedsRefresh(t issuedToken, now time.Time) bool {
	life := t.ExpiresAt.Sub(t.IssuedAt)
	return now.After(t.IssuedAt.Add(life*8/10)) || now.Sub(t.IssuedAt) > maxTokenAge
}

// serviceAccountToken returns a token for the pod's service account bound to the pod, reusing
// the one issued before while it is fresh.
func (m *Manager) serviceAccountToken(ctx context.Context, pod *v1.Pod, volume string, src *v1.ServiceAccountTokenProjection) (string, error) {
	key := volume + "/" + src.Path
	if t, ok := m.store.token(pod.UID, key); ok && !tokenNeedsRefresh(t, m.now()) {
		return t.Token, nil
	}
	if m.client == nil {
		return "", fmt.Errorf("no API client to request a service account token")
	}
	var audiences []string
	if src.Audience != "" {
		audiences = []string{src.Audience}
	}
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		Audiences:         audiences,
		ExpirationSeconds: src.ExpirationSeconds,
		BoundObjectRef:    &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID},
	}}
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	issued := m.now()
	resp, err := m.client.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(ctx, sa, req, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("failed to fetch token: %w", err)
	}
	m.store.setToken(pod.UID, key, issuedToken{Token: resp.Status.Token, IssuedAt: issued, ExpiresAt: resp.Status.ExpirationTimestamp.Time})
	return resp.Status.Token, nil
}
