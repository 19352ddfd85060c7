package objectcache

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// gets counts the GET calls a fake client answers, by resource.
type gets struct {
	mu sync.Mutex
	n  map[string]int
}

func countGets(c *fake.Clientset) *gets {
	g := &gets{n: map[string]int{}}
	c.PrependReactor("get", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		g.mu.Lock()
		g.n[a.GetResource().Resource]++
		g.mu.Unlock()
		return false, nil, nil
	})
	return g
}

func (g *gets) of(resource string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.n[resource]
}

func envPod(uid string, env ...v1.EnvVar) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p-" + uid, Namespace: "ns", UID: types.UID(uid)},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "app", Env: env}}},
	}
}

func cmEnv(name string) v1.EnvVar {
	return v1.EnvVar{Name: "V", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{
		LocalObjectReference: v1.LocalObjectReference{Name: name}, Key: "k"}}}
}

func secretEnv(name string) v1.EnvVar {
	return v1.EnvVar{Name: "S", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{
		LocalObjectReference: v1.LocalObjectReference{Name: name}, Key: "k"}}}
}

func configMap(name, value string) *v1.ConfigMap {
	return &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, Data: map[string]string{"k": value}}
}

// eventually polls cond for up to five seconds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 5*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil }); err != nil {
		t.Fatalf("%s: never happened", what)
	}
}

// Reads of the objects a registered pod refers to come from the watch: however often a
// container is restarted, the API server sees no GET; updates show up through the watch.
func TestRegisteredObjectsAreServedFromTheWatch(t *testing.T) {
	client := fake.NewClientset(configMap("cfg", "v1"),
		&v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "sec", Namespace: "ns"}, Data: map[string][]byte{"k": []byte("s")}})
	g := countGets(client)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := New(ctx, client)
	c.RegisterPod(envPod("a", cmEnv("cfg"), secretEnv("sec")))

	for range 20 {
		cm, err := c.ConfigMap(ctx, "ns", "cfg")
		if err != nil || cm.Data["k"] != "v1" {
			t.Fatalf("configmap %v, %v", cm, err)
		}
		s, err := c.Secret(ctx, "ns", "sec")
		if err != nil || string(s.Data["k"]) != "s" {
			t.Fatalf("secret %v, %v", s, err)
		}
	}
	if n, m := g.of("configmaps"), g.of("secrets"); n != 0 || m != 0 {
		t.Errorf("%d configmap and %d secret GETs, want none", n, m)
	}

	if _, err := client.CoreV1().ConfigMaps("ns").Update(ctx, configMap("cfg", "v2"), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the update reaching the cache", func() bool {
		cm, err := c.ConfigMap(ctx, "ns", "cfg")
		return err == nil && cm.Data["k"] == "v2"
	})
}

// A registered object that does not exist is the kubelet's NotFound error, from the watch;
// once created, it is served.
func TestRegisteredMissingObject(t *testing.T) {
	client := fake.NewClientset()
	g := countGets(client)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := New(ctx, client)
	c.RegisterPod(envPod("a", cmEnv("absent"), secretEnv("gone")))

	_, err := c.ConfigMap(ctx, "ns", "absent")
	if err == nil || err.Error() != `configmap "absent" not found` {
		t.Errorf("configmap error %v", err)
	}
	_, err = c.Secret(ctx, "ns", "gone")
	if err == nil || err.Error() != `secret "gone" not found` {
		t.Errorf("secret error %v", err)
	}
	if n := g.of("configmaps") + g.of("secrets"); n != 0 {
		t.Errorf("%d GETs, want none", n)
	}
	if _, err := client.CoreV1().ConfigMaps("ns").Create(ctx, configMap("absent", "here"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the new configmap reaching the cache", func() bool {
		cm, err := c.ConfigMap(ctx, "ns", "absent")
		return err == nil && cm.Data["k"] == "here"
	})
}

// An object no registered pod refers to is read from the API server, with the kubelet's
// wording when it is missing.
func TestUnregisteredObjectsAreRead(t *testing.T) {
	client := fake.NewClientset(configMap("cfg", "v1"))
	g := countGets(client)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := New(ctx, client)

	if cm, err := c.ConfigMap(ctx, "ns", "cfg"); err != nil || cm.Data["k"] != "v1" {
		t.Fatalf("configmap %v, %v", cm, err)
	}
	if _, err := c.Secret(ctx, "ns", "none"); err == nil || err.Error() != `secret "none" not found` {
		t.Errorf("secret error %v", err)
	}
	if n, m := g.of("configmaps"), g.of("secrets"); n != 1 || m != 1 {
		t.Errorf("%d configmap and %d secret GETs, want one each", n, m)
	}
	if w := c.Watched(); len(w) != 0 {
		t.Errorf("watches without a registered pod: %v", w)
	}
}

// A watch that has not listed its object in time (its list fails here) does not hold up the
// read: it goes to the API server.
func TestReadBeforeTheFirstListAsksTheAPIServer(t *testing.T) {
	client := fake.NewClientset(configMap("cfg", "v1"))
	g := countGets(client)
	client.PrependReactor("list", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("the API server is slow today")
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := New(ctx, client, WithSyncWait(20*time.Millisecond))
	c.RegisterPod(envPod("a", cmEnv("cfg")))

	if cm, err := c.ConfigMap(ctx, "ns", "cfg"); err != nil || cm.Data["k"] != "v1" {
		t.Fatalf("configmap %v, %v", cm, err)
	}
	if n := g.of("configmaps"); n != 1 {
		t.Errorf("%d GETs, want one", n)
	}
}

// Watches live while a pod refers to their object: shared between pods, kept while one of them
// remains, dropped with a reference the pod's new spec no longer has, and gone when the last
// pod is unregistered. Changes are announced only for the pods whose volumes read the object.
func TestWatchesFollowRegisteredPods(t *testing.T) {
	client := fake.NewClientset(configMap("cfg", "v1"), configMap("other", "o"))
	var mu sync.Mutex
	changed := map[types.UID]int{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := New(ctx, client, WithVolumeChanges(func(uid types.UID) { mu.Lock(); changed[uid]++; mu.Unlock() }))

	byVolume := envPod("vol")
	byVolume.Spec.Volumes = []v1.Volume{{Name: "v", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{
		LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}}}}}
	byEnv := envPod("env", cmEnv("cfg"), cmEnv("other"))
	c.RegisterPod(byVolume)
	c.RegisterPod(byEnv)
	if w := c.Watched(); len(w) != 2 {
		t.Fatalf("watched %v, want cfg and other", w)
	}
	if _, err := c.ConfigMap(ctx, "ns", "cfg"); err != nil { // waits for the first list
		t.Fatal(err)
	}

	if _, err := client.CoreV1().ConfigMaps("ns").Update(ctx, configMap("cfg", "v2"), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the change announced to the volume's pod", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return changed["vol"] > 0
	})
	mu.Lock()
	if changed["env"] != 0 {
		t.Errorf("the change was announced to a pod that reads it only in env")
	}
	mu.Unlock()

	byEnv.Spec.Containers[0].Env = []v1.EnvVar{cmEnv("cfg")}
	c.RegisterPod(byEnv)
	if w := c.Watched(); len(w) != 1 || w[0].Name != "cfg" {
		t.Errorf("after the spec dropped a reference: watched %v", w)
	}
	c.UnregisterPod("vol")
	if w := c.Watched(); len(w) != 1 {
		t.Errorf("the env pod still refers to cfg: watched %v", w)
	}
	c.UnregisterPod("env")
	c.UnregisterPod("env") // idempotent
	if w := c.Watched(); len(w) != 0 {
		t.Errorf("watches left after the pods went: %v", w)
	}
}

// An immutable object is read once through its watch, which then ends (as the kubelet's does);
// later reads serve it as last seen, without a GET.
func TestImmutableObjectsStopTheirWatch(t *testing.T) {
	immutable := true
	cm := configMap("fixed", "v1")
	cm.Immutable = &immutable
	client := fake.NewClientset(cm)
	g := countGets(client)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := New(ctx, client)
	c.RegisterPod(envPod("a", cmEnv("fixed")))
	if got, err := c.ConfigMap(ctx, "ns", "fixed"); err != nil || got.Data["k"] != "v1" {
		t.Fatalf("configmap %v, %v", got, err)
	}
	c.mu.Lock()
	stopped := c.watches[Key{KindConfigMap, "ns", "fixed"}].stopped
	c.mu.Unlock()
	if !stopped {
		t.Fatal("the watch of an immutable configmap still runs")
	}
	for range 5 {
		if got, err := c.ConfigMap(ctx, "ns", "fixed"); err != nil || got.Data["k"] != "v1" {
			t.Fatalf("configmap %v, %v; want v1, as last seen", got, err)
		}
	}
	if n := g.of("configmaps"); n != 0 {
		t.Errorf("%d GETs, want none", n)
	}
	c.UnregisterPod("a")
	if w := c.Watched(); len(w) != 0 {
		t.Errorf("watched %v after the pod went", w)
	}
}
