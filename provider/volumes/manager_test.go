package volumes

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/mount-utils"
)

func testPod(vols ...v1.Volume) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: types.UID("uid-1")},
		Spec:       v1.PodSpec{Volumes: vols, ServiceAccountName: "sa", Containers: []v1.Container{{Name: "c"}}},
	}
}

// tokenClient is a fake API whose TokenRequests are answered with numbered tokens; it counts them.
func tokenClient(objs ...runtime.Object) (*fake.Clientset, *int) {
	c := fake.NewClientset(objs...)
	n := 0
	c.PrependReactor("create", "serviceaccounts", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "token" {
			return false, nil, nil
		}
		req := a.(k8stesting.CreateAction).GetObject().(*authenticationv1.TokenRequest).DeepCopy()
		n++
		req.Status.Token = "token-" + string(rune('0'+n))
		req.Status.ExpirationTimestamp = metav1.NewTime(time.Now().Add(time.Hour))
		return true, req, nil
	})
	return c, &n
}

func TestSetUpConfigMapWaitsForTheObject(t *testing.T) {
	client, _ := tokenClient()
	fm := mount.NewFakeMounter(nil)
	m := New(t.TempDir(), WithClient(client), WithMounter(fm))
	pod := testPod(v1.Volume{Name: "cfg", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{
		LocalObjectReference: v1.LocalObjectReference{Name: "absent"}}}})

	errs := m.SetUp(context.Background(), pod)
	if len(errs) != 1 || !errs[0].Blocking {
		t.Fatalf("errors %v", errs)
	}
	if got, want := errs[0].Error(), `MountVolume.SetUp failed for volume "cfg" : configmap "absent" not found`; got != want {
		t.Errorf("event message %q, want %q", got, want)
	}

	_, _ = client.CoreV1().ConfigMaps("ns").Create(context.Background(), &v1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "absent", Namespace: "ns"}, Data: map[string]string{"k": "v1"}}, metav1.CreateOptions{})
	if errs := m.SetUp(context.Background(), pod); len(errs) != 0 {
		t.Fatalf("errors once the configmap exists: %v", errs)
	}
	dir := m.layout.volumeDir(pod.UID, pluginConfigMap, "cfg")
	if b, err := os.ReadFile(filepath.Join(dir, "k")); err != nil || string(b) != "v1" {
		t.Fatalf("k: %q %v", b, err)
	}

	// A failing refresh of a volume the pod has does not block it.
	_ = client.CoreV1().ConfigMaps("ns").Delete(context.Background(), "absent", metav1.DeleteOptions{})
	errs = m.SetUp(context.Background(), pod)
	if len(errs) != 1 || errs[0].Blocking {
		t.Fatalf("refresh errors %v", errs)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "k")); string(b) != "v1" {
		t.Errorf("the last content was not kept: %q", b)
	}
}

func TestSetUpOptionalMissingIsEmpty(t *testing.T) {
	client, _ := tokenClient()
	m := New(t.TempDir(), WithClient(client), WithMounter(mount.NewFakeMounter(nil)))
	yes := true
	pod := testPod(v1.Volume{Name: "s", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "none", Optional: &yes}}})
	if errs := m.SetUp(context.Background(), pod); len(errs) != 0 {
		t.Fatal(errs)
	}
	v, ok := m.store.volume(pod.UID, "s")
	if !ok || !v.Tmpfs || !v.ReadOnly {
		t.Errorf("secret volume %+v", v)
	}
}

func TestProjectedTokenIsReusedWhileFresh(t *testing.T) {
	client, requests := tokenClient(
		&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kube-root-ca.crt", Namespace: "ns"}, Data: map[string]string{"ca.crt": "CA"}})
	now := time.Now()
	m := New(t.TempDir(), WithClient(client), WithMounter(mount.NewFakeMounter(nil)), WithClock(func() time.Time { return now }))
	exp := int64(3600)
	pod := testPod(v1.Volume{Name: "kube-api-access-x", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{
		DefaultMode: mode(0o644),
		Sources: []v1.VolumeProjection{
			{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: &exp}},
			{ConfigMap: &v1.ConfigMapProjection{LocalObjectReference: v1.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []v1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			{DownwardAPI: &v1.DownwardAPIProjection{Items: []v1.DownwardAPIVolumeFile{{Path: "namespace", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}}}},
		}}}})
	for i := 0; i < 3; i++ {
		if errs := m.SetUp(context.Background(), pod); len(errs) != 0 {
			t.Fatal(errs)
		}
	}
	if *requests != 1 {
		t.Errorf("%d token requests for a fresh token, want 1", *requests)
	}
	var req *authenticationv1.TokenRequest
	for _, a := range client.Actions() {
		if ca, ok := a.(k8stesting.CreateAction); ok && a.GetSubresource() == "token" {
			req = ca.GetObject().(*authenticationv1.TokenRequest)
		}
	}
	if ref := req.Spec.BoundObjectRef; ref == nil || ref.Kind != "Pod" || ref.Name != "p" || ref.UID != "uid-1" {
		t.Errorf("token not bound to the pod: %+v", req.Spec.BoundObjectRef)
	}
	dir := m.layout.volumeDir(pod.UID, pluginProjected, "kube-api-access-x")
	for name, want := range map[string]string{"token": "token-1", "ca.crt": "CA", "namespace": "ns"} {
		if b, _ := os.ReadFile(filepath.Join(dir, name)); string(b) != want {
			t.Errorf("%s = %q, want %q", name, b, want)
		}
	}

	now = now.Add(50 * time.Minute) // past 80 % of the hour
	if errs := m.SetUp(context.Background(), pod); len(errs) != 0 {
		t.Fatal(errs)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "token")); *requests != 2 || string(b) != "token-2" {
		t.Errorf("after 80%% of the lifetime: %d requests, token %q", *requests, b)
	}
}

func TestTearDownUnmountsBeforeRemoving(t *testing.T) {
	client, _ := tokenClient(&v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns"}, Data: map[string][]byte{"k": []byte("v")}})
	fm := mount.NewFakeMounter(nil)
	m := New(t.TempDir(), WithClient(client), WithMounter(fm))
	pod := testPod(
		v1.Volume{Name: "s", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "s"}}},
		v1.Volume{Name: "mem", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory}}},
		v1.Volume{Name: "disk", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
	)
	if errs := m.SetUp(context.Background(), pod); len(errs) != 0 {
		t.Fatal(errs)
	}
	if len(fm.MountPoints) != 2 {
		t.Fatalf("tmpfs mounts: %+v", fm.MountPoints)
	}
	fi, err := os.Stat(m.layout.volumeDir(pod.UID, pluginEmptyDir, "disk"))
	if err != nil || fi.Mode().Perm() != 0o777 {
		t.Errorf("emptyDir: %v %v", fi, err)
	}
	if err := m.TearDown(pod.UID); err != nil {
		t.Fatal(err)
	}
	if len(fm.MountPoints) != 0 {
		t.Errorf("left mounted: %+v", fm.MountPoints)
	}
	if _, err := os.Stat(m.layout.podDir(pod.UID)); !os.IsNotExist(err) {
		t.Errorf("pod directory left: %v", err)
	}

	// An orphan is removed; a live pod's directory is not touched.
	live := testPod(v1.Volume{Name: "disk", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}})
	live.UID = "live"
	orphan := testPod(v1.Volume{Name: "disk", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}})
	orphan.UID = "orphan"
	for _, p := range []*v1.Pod{live, orphan} {
		if errs := m.SetUp(context.Background(), p); len(errs) != 0 {
			t.Fatal(errs)
		}
	}
	removed, err := m.CleanupOrphans(func(uid types.UID) bool { return uid == "live" })
	if err != nil || len(removed) != 1 || removed[0] != "orphan" {
		t.Errorf("removed %v %v", removed, err)
	}
	if _, err := os.Stat(m.layout.volumeDir("live", pluginEmptyDir, "disk")); err != nil {
		t.Errorf("live pod's volume: %v", err)
	}
}
