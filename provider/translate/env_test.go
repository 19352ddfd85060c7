package translate

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/vk-cri/vk-cri/provider/downward"
)

// fakeObjects is an ObjectReader over fixed maps; it counts reads.
type fakeObjects struct {
	configMaps map[string]*v1.ConfigMap
	secrets    map[string]*v1.Secret
	reads      int
}

func (f *fakeObjects) ConfigMap(_ context.Context, ns, name string) (*v1.ConfigMap, error) {
	f.reads++
	if cm, ok := f.configMaps[ns+"/"+name]; ok {
		return cm, nil
	}
	return nil, apierrors.NewNotFound(v1.Resource("configmap"), name)
}

func (f *fakeObjects) Secret(_ context.Context, ns, name string) (*v1.Secret, error) {
	f.reads++
	if s, ok := f.secrets[ns+"/"+name]; ok {
		return s, nil
	}
	return nil, apierrors.NewNotFound(v1.Resource("secret"), name)
}

func envFixture() *fakeObjects {
	return &fakeObjects{
		configMaps: map[string]*v1.ConfigMap{
			"default/cfg": {Data: map[string]string{"color": "blue", "b-key": "2", "a-key": "1"}},
		},
		secrets: map[string]*v1.Secret{
			"default/sec": {Data: map[string][]byte{"pw": []byte("s3cr3t"), "color": []byte("red")}},
		},
	}
}

func cmKey(name, key string, optional bool) *v1.EnvVarSource {
	return &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: name}, Key: key, Optional: &optional}}
}

func secretKey(name, key string, optional bool) *v1.EnvVarSource {
	return &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: name}, Key: key, Optional: &optional}}
}

// pairs renders an environment list as NAME=value strings in order.
func pairs(env ContainerEnvironment) []string {
	out := make([]string, 0, len(env.List))
	for _, kv := range env.List {
		out = append(out, kv.Key+"="+string(kv.Value))
	}
	return out
}

func TestResolveEnv(t *testing.T) {
	cases := []struct {
		name    string
		c       v1.Container
		links   *bool
		want    []string
		wantErr string
	}{
		{
			name: "envFrom keys in sorted order with a prefix, then env overriding them",
			c: v1.Container{
				EnvFrom: []v1.EnvFromSource{
					{Prefix: "CFG_", ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}}},
					{SecretRef: &v1.SecretEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "sec"}}},
				},
				Env: []v1.EnvVar{{Name: "pw", Value: "explicit"}},
			},
			want: []string{"CFG_a-key=1", "CFG_b-key=2", "CFG_color=blue", "color=red", "pw=explicit"},
		},
		{
			name: "valueFrom of each kind",
			c: v1.Container{Env: []v1.EnvVar{
				{Name: "COLOR", ValueFrom: cmKey("cfg", "color", false)},
				{Name: "PW", ValueFrom: secretKey("sec", "pw", false)},
				{Name: "NAME", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
				{Name: "IP", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
				{Name: "HOST", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "status.hostIP"}}},
				{Name: "MEM", ValueFrom: &v1.EnvVarSource{ResourceFieldRef: &v1.ResourceFieldSelector{Resource: "limits.memory", Divisor: resource.MustParse("1Mi")}}},
			}},
			want: []string{"COLOR=blue", "PW=s3cr3t", "NAME=web", "IP=10.88.0.5", "HOST=192.168.1.2", "MEM=1024"},
		},
		{
			name: "optional references to missing objects and keys leave the variable out",
			c: v1.Container{
				EnvFrom: []v1.EnvFromSource{{ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "absent"}, Optional: ptrTo(true)}}},
				Env: []v1.EnvVar{
					{Name: "A", ValueFrom: cmKey("absent", "x", true)},
					{Name: "B", ValueFrom: cmKey("cfg", "absent", true)},
					{Name: "C", ValueFrom: secretKey("absent", "x", true)},
					{Name: "D", ValueFrom: secretKey("sec", "absent", true)},
					{Name: "E", Value: "kept"},
				},
			},
			want: []string{"E=kept"},
		},
		{
			name: "$(VAR) expands to earlier variables and service variables, not later ones",
			c: v1.Container{Env: []v1.EnvVar{
				{Name: "A", Value: "a"},
				{Name: "B", Value: "$(A)-$(C)-$(KUBERNETES_SERVICE_HOST)-$$(A)"},
				{Name: "C", Value: "c"},
			}},
			want: []string{"A=a", "B=a-$(C)-10.96.0.1-$(A)", "C=c"},
		},
		{name: "missing ConfigMap", c: v1.Container{Env: []v1.EnvVar{{Name: "A", ValueFrom: cmKey("absent", "x", false)}}}, wantErr: `configmap "absent" not found`},
		{name: "missing ConfigMap key", c: v1.Container{Env: []v1.EnvVar{{Name: "A", ValueFrom: cmKey("cfg", "x", false)}}}, wantErr: "couldn't find key x in ConfigMap default/cfg"},
		{name: "missing Secret", c: v1.Container{Env: []v1.EnvVar{{Name: "A", ValueFrom: secretKey("absent", "x", false)}}}, wantErr: `secret "absent" not found`},
		{name: "missing Secret key", c: v1.Container{Env: []v1.EnvVar{{Name: "A", ValueFrom: secretKey("sec", "x", false)}}}, wantErr: "couldn't find key x in Secret default/sec"},
		{
			name:    "missing envFrom Secret",
			c:       v1.Container{EnvFrom: []v1.EnvFromSource{{SecretRef: &v1.SecretEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "absent"}}}}},
			wantErr: `secret "absent" not found`,
		},
		{
			name:    "unsupported field path",
			c:       v1.Container{Env: []v1.EnvVar{{Name: "A", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "spec.containers"}}}}},
			wantErr: "field label not supported: spec.containers",
		},
		{
			name:  "service links off: only the API server's variables",
			c:     v1.Container{},
			links: ptrTo(false),
			want: []string{"KUBERNETES_PORT=tcp://10.96.0.1:443", "KUBERNETES_PORT_443_TCP=tcp://10.96.0.1:443",
				"KUBERNETES_PORT_443_TCP_ADDR=10.96.0.1", "KUBERNETES_PORT_443_TCP_PORT=443", "KUBERNETES_PORT_443_TCP_PROTO=tcp",
				"KUBERNETES_SERVICE_HOST=10.96.0.1", "KUBERNETES_SERVICE_PORT=443"},
		},
	}
	services := []*v1.Service{
		svc("default", "kubernetes", "10.96.0.1", v1.ServicePort{Port: 443, Protocol: v1.ProtocolTCP}),
		svc("default", "db", "10.96.0.7", v1.ServicePort{Port: 5432}),
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.c
			c.Name = "app"
			c.Resources.Limits = v1.ResourceList{v1.ResourceMemory: resource.MustParse("1Gi")}
			pod := testPod(withContainers(c))
			pod.Spec.EnableServiceLinks = tc.links
			got, err := ResolveEnv(context.Background(), envFixture(), EnvInput{
				Pod:       pod,
				Container: &pod.Spec.Containers[0],
				Runtime:   downward.RuntimeInfo{PodIPs: []string{"10.88.0.5"}, HostIPs: []string{"192.168.1.2"}},
				Services:  services,
			})
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			all := pairs(got)
			// The service variables come last, sorted; compare the declared part unless the case
			// is about them.
			declared := all[:len(all)-countServiceVars(all)]
			if tc.links != nil {
				declared = all
			}
			if diff := cmp.Diff(tc.want, declared); diff != "" {
				t.Errorf("env (-want +got):\n%s\nall: %v", diff, all)
			}
			for _, kv := range got.List {
				if got.Values[kv.Key] != string(kv.Value) {
					t.Errorf("Values[%s] = %q, list has %q", kv.Key, got.Values[kv.Key], kv.Value)
				}
			}
		})
	}
}

// countServiceVars counts the trailing service variables (DB_* and KUBERNETES_*) of a list.
func countServiceVars(all []string) int {
	n := 0
	for i := len(all) - 1; i >= 0; i-- {
		k := all[i]
		if len(k) > 3 && (k[:3] == "DB_" || (len(k) > 11 && k[:11] == "KUBERNETES_")) {
			n++
			continue
		}
		break
	}
	return n
}

// Service variables come after the declared ones, and a declared variable of the same name wins.
func TestResolveEnvServiceVariables(t *testing.T) {
	services := []*v1.Service{svc("default", "db", "10.96.0.7", v1.ServicePort{Port: 5432})}
	c := v1.Container{Name: "app", Env: []v1.EnvVar{{Name: "DB_SERVICE_PORT", Value: "mine"}}}
	pod := testPod(withContainers(c))
	got, err := ResolveEnv(context.Background(), envFixture(), EnvInput{Pod: pod, Container: &pod.Spec.Containers[0], Services: services})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"DB_SERVICE_PORT=mine", "DB_PORT=tcp://10.96.0.7:5432", "DB_PORT_5432_TCP=tcp://10.96.0.7:5432",
		"DB_PORT_5432_TCP_ADDR=10.96.0.7", "DB_PORT_5432_TCP_PORT=5432", "DB_PORT_5432_TCP_PROTO=tcp", "DB_SERVICE_HOST=10.96.0.7"}
	if diff := cmp.Diff(want, pairs(got)); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
}

// Each ConfigMap or Secret is read once per container start however often it is referenced.
func TestResolveEnvReadsEachObjectOnce(t *testing.T) {
	objs := envFixture()
	c := v1.Container{Name: "app", Env: []v1.EnvVar{
		{Name: "A", ValueFrom: cmKey("cfg", "color", false)},
		{Name: "B", ValueFrom: cmKey("cfg", "a-key", false)},
		{Name: "C", ValueFrom: secretKey("sec", "pw", false)},
		{Name: "D", ValueFrom: secretKey("sec", "color", false)},
	}, EnvFrom: []v1.EnvFromSource{{ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}}}}}
	pod := testPod(withContainers(c))
	if _, err := ResolveEnv(context.Background(), objs, EnvInput{Pod: pod, Container: &pod.Spec.Containers[0]}); err != nil {
		t.Fatal(err)
	}
	if objs.reads != 2 {
		t.Errorf("%d reads, want 2 (one ConfigMap, one Secret)", objs.reads)
	}
}

// Without an object source, references cannot be resolved: a clear error, no panic.
func TestResolveEnvWithoutObjectSource(t *testing.T) {
	c := v1.Container{Name: "app", Env: []v1.EnvVar{{Name: "A", ValueFrom: cmKey("cfg", "x", false)}}}
	pod := testPod(withContainers(c))
	_, err := ResolveEnv(context.Background(), nil, EnvInput{Pod: pod, Container: &pod.Spec.Containers[0]})
	if want := "couldn't get configMap default/cfg, no kubeClient defined"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}
