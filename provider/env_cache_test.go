package provider

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/vk-cri/vk-cri/provider/objectcache"
	"github.com/vk-cri/vk-cri/provider/translate"
)

// A container restarted again and again (CrashLoopBackOff) resolves its env from the node's
// object cache: once its pod is registered, the API server sees no GET, and missing objects
// keep the kubelet's errors and optional references their meaning.
func TestResolveEnvThroughTheObjectCache(t *testing.T) {
	client := fake.NewClientset(
		&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: testPodNS}, Data: map[string]string{"color": "blue"}},
		&v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "sec", Namespace: testPodNS}, Data: map[string][]byte{"pw": []byte("s3cr3t")}})
	var mu sync.Mutex
	getCalls := 0
	client.PrependReactor("get", "*", func(k8stesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		getCalls++
		mu.Unlock()
		return false, nil, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	objects := objectcache.New(ctx, client)

	c := v1.Container{Name: "app",
		EnvFrom: []v1.EnvFromSource{
			{ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}}},
			{Prefix: "OPT_", ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "absent"}, Optional: new(true)}},
		},
		Env: []v1.EnvVar{
			{Name: "PW", ValueFrom: secretKey("sec", "pw", false)},
			{Name: "MAYBE", ValueFrom: secretKey("nosecret", "pw", true)},
		}}
	pod := testPod(withContainers(c))
	objects.RegisterPod(pod)
	for range 10 {
		env, err := translate.ResolveEnv(ctx, objects, translate.EnvInput{Pod: pod, Container: &pod.Spec.Containers[0]})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"color=blue", "PW=s3cr3t"}, pairs(env)); diff != "" {
			t.Fatalf("env (-want +got):\n%s", diff)
		}
	}
	mu.Lock()
	if getCalls != 0 {
		t.Errorf("%d GETs for ten starts, want none", getCalls)
	}
	mu.Unlock()

	missing := testPod(withContainers(v1.Container{Name: "app", Env: []v1.EnvVar{{Name: "X", ValueFrom: cmKey("absent", "k", false)}}}))
	missing.UID = "uid-2"
	objects.RegisterPod(missing)
	_, err := translate.ResolveEnv(ctx, objects, translate.EnvInput{Pod: missing, Container: &missing.Spec.Containers[0]})
	if want := `configmap "absent" not found`; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}
func cmKey(name, key string, optional bool) *v1.EnvVarSource {
	return &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: name}, Key: key, Optional: &optional}}
}

func secretKey(name, key string, optional bool) *v1.EnvVarSource {
	return &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: name}, Key: key, Optional: &optional}}
}

// pairs renders an environment list as NAME=value strings in order.
func pairs(env translate.ContainerEnvironment) []string {
	out := make([]string, 0, len(env.List))
	for _, kv := range env.List {
		out = append(out, kv.Key+"="+string(kv.Value))
	}
	return out
}
