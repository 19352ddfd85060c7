package volumes

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/mount-utils"
)

func TestVolumeObjects(t *testing.T) {
	pod := testPod(
		v1.Volume{Name: "a", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "cm"}}}},
		v1.Volume{Name: "b", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "s"}}},
		v1.Volume{Name: "c", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{
			{ConfigMap: &v1.ConfigMapProjection{LocalObjectReference: v1.LocalObjectReference{Name: "kube-root-ca.crt"}}},
			{Secret: &v1.SecretProjection{LocalObjectReference: v1.LocalObjectReference{Name: "s2"}}},
			{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Path: "token"}},
		}}}},
		v1.Volume{Name: "d", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
	)
	got := volumeObjects(pod)
	want := []objectKey{{kindConfigMap, "ns", "cm"}, {kindSecret, "ns", "s"}, {kindConfigMap, "ns", "kube-root-ca.crt"}, {kindSecret, "ns", "s2"}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%d: %v, want %v", i, got[i], want[i])
		}
	}
}

// A change of a ConfigMap is announced for the pods that read it, and the next set-up reads it
// from the watch's cache.
func TestObjectWatchAnnouncesChanges(t *testing.T) {
	client, _ := tokenClient(&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: "ns"}, Data: map[string]string{"k": "v1"}})
	var mu sync.Mutex
	changed := map[types.UID]int{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := New(t.TempDir(), WithClient(client), WithMounter(mount.NewFakeMounter(nil)),
		WithObjectWatches(ctx, func(uid types.UID) { mu.Lock(); changed[uid]++; mu.Unlock() }))
	pod := testPod(v1.Volume{Name: "cfg", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}}}})
	if errs := m.SetUp(ctx, pod); len(errs) != 0 {
		t.Fatal(errs)
	}
	key := objectKey{kindConfigMap, "ns", "cfg"}
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		_, _, ok := m.watcher.cached(key)
		return ok, nil
	}); err != nil {
		t.Fatal("the watch never listed the configmap")
	}
	_, err := client.CoreV1().ConfigMaps("ns").Update(ctx, &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: "ns"}, Data: map[string]string{"k": "v2"}}, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		return changed[pod.UID] > 0, nil
	}); err != nil {
		t.Fatal("the update was not announced")
	}
	if errs := m.SetUp(ctx, pod); len(errs) != 0 {
		t.Fatal(errs)
	}
	b, _ := os.ReadFile(filepath.Join(m.layout.volumeDir(pod.UID, pluginConfigMap, "cfg"), "k"))
	if string(b) != "v2" {
		t.Errorf("after the update the volume shows %q", b)
	}
	if err := m.TearDown(pod.UID); err != nil {
		t.Fatal(err)
	}
	if len(m.watcher.watches) != 0 {
		t.Errorf("watches left after the pod went: %v", m.watcher.watches)
	}
}
