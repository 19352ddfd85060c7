package cri

import (
	"encoding/base64"
	"encoding/json"
	"net"
	"net/url"
	"path/filepath"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// dockerHubHost is the registry of image names without a host, under which a key of
// "index.docker.io/v1/" files credentials.
const dockerHubHost = "index.docker.io"

// dockerAuth is one registry entry of a docker config: a user and password, or "auth" holding
// both base64-encoded as user:password.
type dockerAuth struct {
	Username string `json:"username"`
	Password string `json:"password"`
	Auth     string `json:"auth"`
}

func (a dockerAuth) credentials() (user, password string) {
	if a.Username != "" || a.Password != "" || a.Auth == "" {
		return a.Username, a.Password
	}
	raw, err := base64.StdEncoding.DecodeString(a.Auth)
	if err != nil {
		return "", ""
	}
	user, password, _ = strings.Cut(string(raw), ":")
	return user, password
}

// secretAuths reads the registry entries of a kubernetes.io/dockerconfigjson or
// kubernetes.io/dockercfg secret; other secrets and unreadable data give none.
func secretAuths(s *v1.Secret) map[string]dockerAuth {
	var entries map[string]dockerAuth
	switch s.Type {
	case v1.SecretTypeDockerConfigJson:
		var cfg struct {
			Auths map[string]dockerAuth `json:"auths"`
		}
		if json.Unmarshal(s.Data[v1.DockerConfigJsonKey], &cfg) == nil {
			entries = cfg.Auths
		}
	case v1.SecretTypeDockercfg:
		_ = json.Unmarshal(s.Data[v1.DockerConfigKey], &entries)
	}
	return entries
}

// credentialKey turns a docker config key ("https://reg.example:5000/v1/", "reg.example/team")
// into the host[/path] it applies to.
func credentialKey(key string) (string, bool) {
	if !strings.HasPrefix(key, "https://") && !strings.HasPrefix(key, "http://") {
		key = "https://" + key
	}
	u, err := url.Parse(key)
	if err != nil {
		return "", false
	}
	p := u.Path
	if strings.HasPrefix(p, "/v1/") || strings.HasPrefix(p, "/v2/") {
		p = p[3:]
	}
	if p == "" || p == "/" {
		return u.Host, true
	}
	return u.Host + p, true
}

// ImageRepository is the image's repository as registries see it, without tag or digest:
// "busybox" is "docker.io/library/busybox".
func ImageRepository(image string) string {
	name, _, _ := strings.Cut(image, "@")
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name = name[:i]
	}
	first, rest, hasSlash := strings.Cut(name, "/")
	if !hasSlash {
		return "docker.io/library/" + name
	}
	if !strings.ContainsAny(first, ".:") && first != "localhost" {
		return "docker.io/" + name
	}
	if first == "index.docker.io" {
		return "docker.io/" + rest
	}
	return name
}

// keyMatches reports whether a credential key (host[:port][/path], the host parts possibly
// globs like *.example.com) covers the repository: same port, same number of host parts each
// matching, and the key's path a prefix of the repository's.
func keyMatches(key, repo string) bool {
	k, err1 := url.Parse("https://" + key)
	r, err2 := url.Parse("https://" + repo)
	if err1 != nil || err2 != nil {
		return false
	}
	kHost, kPort := splitHostPort(k.Host)
	rHost, rPort := splitHostPort(r.Host)
	if kPort != rPort || !strings.HasPrefix(r.Path, k.Path) {
		return false
	}
	kParts, rParts := strings.Split(kHost, "."), strings.Split(rHost, ".")
	if len(kParts) != len(rParts) {
		return false
	}
	for i := range kParts {
		if ok, err := filepath.Match(kParts[i], rParts[i]); err != nil || !ok {
			return false
		}
	}
	return true
}

func splitHostPort(hostport string) (string, string) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return hostport, ""
	}
	return host, port
}

// PullCredentials lists the credentials of the pod's pull secrets that apply to image, most
// specific key first, as the kubelet's keyring orders them; each is tried in turn. Docker Hub
// images also take credentials filed under index.docker.io.
func PullCredentials(secrets []v1.Secret, image string) []*runtimeapi.AuthConfig {
	byKey := map[string][]dockerAuth{}
	for i := range secrets {
		for k, a := range secretAuths(&secrets[i]) {
			if key, ok := credentialKey(k); ok {
				byKey[key] = append(byKey[key], a)
			}
		}
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Sort(sort.Reverse(sort.StringSlice(keys)))

	repo := ImageRepository(image)
	var matched []dockerAuth
	for _, k := range keys {
		if keyMatches(k, repo) {
			matched = append(matched, byKey[k]...)
		}
	}
	if len(matched) == 0 && strings.HasPrefix(repo, "docker.io/") {
		matched = byKey[dockerHubHost]
	}
	out := make([]*runtimeapi.AuthConfig, 0, len(matched))
	for _, a := range matched {
		user, password := a.credentials()
		out = append(out, &runtimeapi.AuthConfig{Username: user, Password: password})
	}
	return out
}
