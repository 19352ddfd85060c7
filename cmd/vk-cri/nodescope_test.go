package main

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

// nodeutil's informers on every Secret and ConfigMap never reach the API; single reads and other
// resources do.
func TestWithoutClusterWideSecretsKeepsNodeutilFromListingSecrets(t *testing.T) {
	secret := &v1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "s"}}
	real := fake.NewClientset(secret, &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c"}},
		&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}})
	c := withoutClusterWideSecrets(real)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	factory := informers.NewSharedInformerFactory(c, time.Minute)
	secrets := factory.Core().V1().Secrets()
	configMaps := factory.Core().V1().ConfigMaps()
	pods := factory.Core().V1().Pods()
	secrets.Informer()
	configMaps.Informer()
	pods.Informer()
	factory.Start(ctx.Done())
	synced := factory.WaitForCacheSync(ctx.Done())
	for typ, ok := range synced {
		if !ok {
			t.Fatalf("informer %v did not sync", typ)
		}
	}
	if got, _ := secrets.Lister().List(everything()); len(got) != 0 {
		t.Errorf("secret informer holds %d secrets", len(got))
	}
	if got, _ := configMaps.Lister().List(everything()); len(got) != 0 {
		t.Errorf("configmap informer holds %d configmaps", len(got))
	}
	if got, _ := pods.Lister().List(everything()); len(got) != 1 {
		t.Errorf("pod informer holds %d pods, want 1", len(got))
	}
	for _, a := range real.Actions() {
		if (a.GetVerb() == "list" || a.GetVerb() == "watch") && (a.GetResource().Resource == "secrets" || a.GetResource().Resource == "configmaps") {
			t.Errorf("%s %s reached the API", a.GetVerb(), a.GetResource().Resource)
		}
	}
	real.ClearActions()
	got, err := c.CoreV1().Secrets("ns").Get(ctx, "s", metav1.GetOptions{})
	if err != nil || got.Name != "s" {
		t.Fatalf("get of one secret: %v %v", got, err)
	}
	if acts := real.Actions(); len(acts) != 1 || acts[0].(clienttesting.GetAction).GetName() != "s" {
		t.Errorf("single get did not reach the API: %v", acts)
	}
}

func everything() labels.Selector { return labels.Everything() }

// Informers of a real client stream their initial list (watch-list): the silent watch ends that
// empty list with the bookmark the reflector waits for, then stays silent until stopped.
func TestSilentWatchEndsTheInitialEventsAtOnce(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	yes := true
	w, err := withoutClusterWideSecrets(fake.NewClientset()).CoreV1().Secrets("").Watch(ctx, metav1.ListOptions{SendInitialEvents: &yes})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-w.ResultChan():
		s, ok := e.Object.(*v1.Secret)
		if e.Type != watch.Bookmark || !ok || s.Annotations[metav1.InitialEventsAnnotationKey] != "true" {
			t.Fatalf("first event %v %#v, want the initial-events-end bookmark", e.Type, e.Object)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no bookmark")
	}
	w.Stop()
	select {
	case _, open := <-w.ResultChan():
		if open {
			t.Fatal("an event after the bookmark")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the watch did not end when stopped")
	}
}
