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

	"github.com/vk-cri/vk-cri/provider/objectcache"
)

// With the node's object cache, a change of a ConfigMap is announced for the pods whose volumes
// read it, and the next set-up shows it.
func TestVolumesReadThroughTheObjectCache(t *testing.T) {
	client, _ := tokenClient(&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: "ns"}, Data: map[string]string{"k": "v1"}})
	var mu sync.Mutex
	changed := map[types.UID]int{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	objects := objectcache.New(ctx, client,
		objectcache.WithVolumeChanges(func(uid types.UID) { mu.Lock(); changed[uid]++; mu.Unlock() }))
	m := New(t.TempDir(), WithClient(client), WithMounter(mount.NewFakeMounter(nil)), WithObjects(objects))
	pod := testPod(v1.Volume{Name: "cfg", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}}}})
	objects.RegisterPod(pod)
	if errs := m.SetUp(ctx, pod).errs(); len(errs) != 0 {
		t.Fatal(errs)
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
	if errs := m.SetUp(ctx, pod).errs(); len(errs) != 0 {
		t.Fatal(errs)
	}
	b, _ := os.ReadFile(filepath.Join(m.layout.volumeDir(pod.UID, pluginConfigMap, "cfg"), "k"))
	if string(b) != "v2" {
		t.Errorf("after the update the volume shows %q", b)
	}
}
