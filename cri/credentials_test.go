package cri

import (
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
)

func dockerConfigSecret(t *testing.T, auths map[string]dockerAuth) v1.Secret {
	t.Helper()
	b, err := json.Marshal(map[string]any{"auths": auths})
	if err != nil {
		t.Fatal(err)
	}
	return v1.Secret{Type: v1.SecretTypeDockerConfigJson, Data: map[string][]byte{v1.DockerConfigJsonKey: b}}
}

func TestImageRepository(t *testing.T) {
	for in, want := range map[string]string{
		"busybox":                              "docker.io/library/busybox",
		"busybox:1.36":                         "docker.io/library/busybox",
		"library/busybox@sha256:abc":           "docker.io/library/busybox",
		"team/app:v1":                          "docker.io/team/app",
		"index.docker.io/team/app":             "docker.io/team/app",
		"127.0.0.1:5000/vk-cri/busybox:latest": "127.0.0.1:5000/vk-cri/busybox",
		"localhost/app":                        "localhost/app",
		"registry.example.com/a/b/c:1":         "registry.example.com/a/b/c",
	} {
		if got := ImageRepository(in); got != want {
			t.Errorf("ImageRepository(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPullCredentials(t *testing.T) {
	basic := base64.StdEncoding.EncodeToString([]byte("u2:p2"))
	secrets := []v1.Secret{
		dockerConfigSecret(t, map[string]dockerAuth{
			"https://registry.example.com/v1/": {Username: "u1", Password: "p1"},
			"registry.example.com/team":        {Auth: basic},
			"*.wild.example":                   {Username: "w", Password: "w"},
			"127.0.0.1:5001":                   {Username: "local", Password: "l"},
			"https://index.docker.io/v1/":      {Username: "hub", Password: "h"},
		}),
		{Type: v1.SecretTypeDockercfg, Data: map[string][]byte{v1.DockerConfigKey: []byte(`{"registry.example.com":{"username":"old","password":"o"}}`)}},
		{Type: v1.SecretTypeOpaque, Data: map[string][]byte{"x": []byte("y")}},
	}
	users := func(image string) []string {
		var out []string
		for _, a := range PullCredentials(secrets, image) {
			out = append(out, a.Username+":"+a.Password)
		}
		return out
	}
	cases := map[string][]string{
		// The more specific key (with a path) first, then the registry's own entries.
		"registry.example.com/team/app:1": {"u2:p2", "u1:p1", "old:o"},
		"registry.example.com/other/app":  {"u1:p1", "old:o"},
		"eu.wild.example/app":             {"w:w"},
		"a.b.wild.example/app":            nil, // a glob matches one host label
		"127.0.0.1:5001/vk-cri/busybox":   {"local:l"},
		"127.0.0.1:5002/vk-cri/busybox":   nil, // another port
		"busybox":                         {"hub:h"},
		"unknown.example/app":             nil,
	}
	for image, want := range cases {
		if diff := cmp.Diff(want, users(image)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", image, diff)
		}
	}
}

func TestWithDefaultTag(t *testing.T) {
	for in, want := range map[string]string{
		"busybox":                "busybox:latest",
		"busybox:1.36":           "busybox:1.36",
		"127.0.0.1:5000/a/b":     "127.0.0.1:5000/a/b:latest",
		"a@sha256:" + sha64('a'): "a@sha256:" + sha64('a'),
	} {
		if got, err := WithDefaultTag(in); err != nil || got != want {
			t.Errorf("WithDefaultTag(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	_, err := WithDefaultTag("127.0.0.1:5000/vk-cri/Invalid_Name:latest")
	want := `couldn't parse image name "127.0.0.1:5000/vk-cri/Invalid_Name:latest": invalid reference format: repository name (vk-cri/Invalid_Name) must be lowercase`
	if err == nil || err.Error() != want {
		t.Errorf("invalid name: error %v, want %q", err, want)
	}
}

func sha64(c byte) string {
	b := make([]byte, 64)
	for i := range b {
		b[i] = c
	}
	return string(b)
}
