package volumes

import (
	"reflect"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func mode(m int32) *int32 { return &m }

func TestConfigMapPayload(t *testing.T) {
	cm := &v1.ConfigMap{Data: map[string]string{"a": "1", "b": "2"}, BinaryData: map[string][]byte{"bin": {0, 1}}}
	cases := []struct {
		name     string
		items    []v1.KeyToPath
		optional bool
		want     payload
		wantErr  string
	}{
		{name: "every key", want: payload{"a": {[]byte("1"), 0o644}, "b": {[]byte("2"), 0o644}, "bin": {[]byte{0, 1}, 0o644}}},
		{name: "items with paths and modes", items: []v1.KeyToPath{{Key: "a", Path: "x/a.txt", Mode: mode(0o400)}, {Key: "bin", Path: "bin"}},
			want: payload{"x/a.txt": {[]byte("1"), 0o400}, "bin": {[]byte{0, 1}, 0o644}}},
		{name: "missing key", items: []v1.KeyToPath{{Key: "nope", Path: "n"}}, wantErr: "configmap references non-existent config key: nope"},
		{name: "missing key optional", items: []v1.KeyToPath{{Key: "nope", Path: "n"}, {Key: "a", Path: "a"}}, optional: true,
			want: payload{"a": {[]byte("1"), 0o644}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := configMapPayload(cm, c.items, 0o644, c.optional)
			if c.wantErr != "" {
				if err == nil || err.Error() != c.wantErr {
					t.Fatalf("error %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %v %v, want %v", got, err, c.want)
			}
		})
	}
}

func TestSecretPayloadMissingKey(t *testing.T) {
	_, err := secretPayload(&v1.Secret{Data: map[string][]byte{"a": []byte("1")}}, []v1.KeyToPath{{Key: "b", Path: "b"}}, 0o400, false)
	if err == nil || err.Error() != "references non-existent secret key: b" {
		t.Errorf("error %v", err)
	}
}

func TestDownwardPayload(t *testing.T) {
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Labels: map[string]string{"tier": "b", "app": "a"},
			Annotations: map[string]string{"example.com/build": "42"}},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{
			Limits: v1.ResourceList{v1.ResourceMemory: resource.MustParse("64Mi")}}}}},
	}
	alloc := v1.ResourceList{v1.ResourceCPU: resource.MustParse("2"), v1.ResourceMemory: resource.MustParse("1Gi")}
	items := []v1.DownwardAPIVolumeFile{
		{Path: "name", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}},
		{Path: "labels", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.labels"}, Mode: mode(0o400)},
		{Path: "build", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.annotations['example.com/build']"}},
		{Path: "mem", ResourceFieldRef: &v1.ResourceFieldSelector{ContainerName: "c", Resource: "limits.memory", Divisor: resource.MustParse("1Mi")}},
		{Path: "cpu", ResourceFieldRef: &v1.ResourceFieldSelector{ContainerName: "c", Resource: "limits.cpu"}},
	}
	got, err := downwardPayload(pod, items, 0o644, alloc)
	if err != nil {
		t.Fatal(err)
	}
	want := payload{
		"name": {[]byte("p"), 0o644}, "labels": {[]byte("app=\"a\"\ntier=\"b\""), 0o400}, "build": {[]byte("42"), 0o644},
		"mem": {[]byte("64"), 0o644}, "cpu": {[]byte("2"), 0o644},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	_, err = downwardPayload(pod, []v1.DownwardAPIVolumeFile{{Path: "x", ResourceFieldRef: &v1.ResourceFieldSelector{ContainerName: "nope", Resource: "limits.cpu"}}}, 0o644, alloc)
	if err == nil {
		t.Error("a resourceFieldRef naming no container was accepted")
	}
}

func TestTokenNeedsRefresh(t *testing.T) {
	issued := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	hour := issuedToken{IssuedAt: issued, ExpiresAt: issued.Add(time.Hour)}
	week := issuedToken{IssuedAt: issued, ExpiresAt: issued.Add(7 * 24 * time.Hour)}
	for _, c := range []struct {
		name string
		tok  issuedToken
		at   time.Duration
		want bool
	}{
		{"fresh", hour, 10 * time.Minute, false},
		{"just before 80%", hour, 47 * time.Minute, false},
		{"past 80%", hour, 49 * time.Minute, true},
		{"long token under a day", week, 23 * time.Hour, false},
		{"long token over a day", week, 25 * time.Hour, true},
	} {
		if got := tokenNeedsRefresh(c.tok, issued.Add(c.at)); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestExpandSubPath(t *testing.T) {
	env := map[string]string{"POD": "web-0", "NS": "prod", "EMPTY": ""}
	for _, c := range []struct{ expr, want, err string }{
		{expr: "$(POD)", want: "web-0"},
		{expr: "logs/$(NS)/$(POD)", want: "logs/prod/web-0"},
		{expr: "cost$$5", want: "cost$5"},
		{expr: "a$b", want: "a$b"},
		{expr: "$(POD", want: "$(POD"},
		{expr: "x/$(MISSING)/$(EMPTY)", err: "missing value for EMPTY, MISSING"},
	} {
		got, err := ExpandSubPath(c.expr, env)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.expr, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q: %q %v, want %q", c.expr, got, err, c.want)
		}
	}
}
