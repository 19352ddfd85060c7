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

// testPod is a pod whose container mounts each of vols.
func testPod(vols ...v1.Volume) *v1.Pod {
	c := v1.Container{Name: "c"}
	for _, v := range vols {
		c.VolumeMounts = append(c.VolumeMounts, v1.VolumeMount{Name: v.Name, MountPath: "/" + v.Name})
	}
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: types.UID("uid-1")},
		Spec:       v1.PodSpec{Volumes: vols, ServiceAccountName: "sa", Containers: []v1.Container{c}},
	}
}

// Like the kubelet, a volume no container mounts is left alone: its missing ConfigMap does not
// keep the pod waiting.
func TestSetUpSkipsUnusedVolumes(t *testing.T) {
	client, _ := tokenClient()
	m := New(t.TempDir(), WithClient(client), WithMounter(mount.NewFakeMounter(nil)))
	pod := testPod(v1.Volume{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}})
	pod.Spec.Volumes = append(pod.Spec.Volumes, v1.Volume{Name: "unused", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{
		LocalObjectReference: v1.LocalObjectReference{Name: "absent"}}}})
	if res := m.SetUp(context.Background(), pod); len(res.errs()) != 0 || res.Waiting {
		t.Fatalf("result %+v", res)
	}
	if _, ok := m.store.volume(pod.UID, "unused"); ok {
		t.Error("the unused volume was set up")
	}
	// Mounted by an ephemeral container added later, it is set up (and waits for its object).
	pod.Spec.EphemeralContainers = []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{
		Name: "debug", VolumeMounts: []v1.VolumeMount{{Name: "unused", MountPath: "/u"}}}}}
	if res := m.SetUp(context.Background(), pod); len(res.Failed) != 1 || !res.Waiting {
		t.Fatalf("result once an ephemeral container mounts it: %+v", res)
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

// errs is every error of the call (tests).
func (r SetUpResult) errs() []error {
	var out []error
	for _, e := range r.Failed {
		out = append(out, e)
	}
	if r.Unprocessed != nil {
		out = append(out, r.Unprocessed)
	}
	return out
}

// fakeClock is a clock the test moves.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time                     { return c.t }
func (c *fakeClock) step(d time.Duration)               { c.t = c.t.Add(d) }
func noJitter(d time.Duration, _ float64) time.Duration { return d }

func TestSetUpConfigMapWaitsForTheObject(t *testing.T) {
	client, _ := tokenClient()
	fm := mount.NewFakeMounter(nil)
	clock := &fakeClock{t: time.Unix(1000, 0)}
	m := New(t.TempDir(), WithClient(client), WithMounter(fm), WithClock(clock.now))
	pod := testPod(v1.Volume{Name: "cfg", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{
		LocalObjectReference: v1.LocalObjectReference{Name: "absent"}}}})

	res := m.SetUp(context.Background(), pod)
	if len(res.Failed) != 1 || !res.Failed[0].Blocking || !res.Waiting || res.RetryIn != 500*time.Millisecond {
		t.Fatalf("result %+v", res)
	}
	if got, want := res.Failed[0].Error(), `MountVolume.SetUp failed for volume "cfg" : configmap "absent" not found`; got != want {
		t.Errorf("event message %q, want %q", got, want)
	}

	// Created meanwhile, the object is mounted at the next attempt, not before (the kubelet's back-off).
	_, _ = client.CoreV1().ConfigMaps("ns").Create(context.Background(), &v1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "absent", Namespace: "ns"}, Data: map[string]string{"k": "v1"}}, metav1.CreateOptions{})
	clock.step(200 * time.Millisecond)
	if res := m.SetUp(context.Background(), pod); len(res.errs()) != 0 || !res.Waiting || res.RetryIn != 300*time.Millisecond {
		t.Fatalf("before the retry is due: %+v", res)
	}
	clock.step(300 * time.Millisecond)
	if res := m.SetUp(context.Background(), pod); len(res.errs()) != 0 || res.Waiting || res.RetryIn != 0 {
		t.Fatalf("once the retry is due: %+v", res)
	}
	dir := m.layout.volumeDir(pod.UID, pluginConfigMap, "cfg")
	if b, err := os.ReadFile(filepath.Join(dir, "k")); err != nil || string(b) != "v1" {
		t.Fatalf("k: %q %v", b, err)
	}

	// A failing refresh of a volume the pod has does not block it; the back-off starts afresh.
	_ = client.CoreV1().ConfigMaps("ns").Delete(context.Background(), "absent", metav1.DeleteOptions{})
	res = m.SetUp(context.Background(), pod)
	if len(res.Failed) != 1 || res.Failed[0].Blocking || res.Waiting || res.RetryIn != 500*time.Millisecond {
		t.Fatalf("refresh result %+v", res)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "k")); string(b) != "v1" {
		t.Errorf("the last content was not kept: %q", b)
	}
}

// TestSetUpRetrySchedule: a missing Secret is tried at the kubelet's moments (500 ms, doubling,
// at most 2 min 2 s apart), each failed attempt one FailedMount; an unbound claim is tried at each
// pod-worker back-off (10 s plus jitter) with the kubelet's pod-level message.
func TestSetUpRetrySchedule(t *testing.T) {
	second := func(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }
	for _, tc := range []struct {
		name   string
		volume v1.Volume
		// attempts are the moments (seconds from the first) of the attempts that fail.
		attempts []float64
		event    string
	}{
		{
			name:     "missing secret",
			volume:   v1.Volume{Name: "s", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "later"}}},
			attempts: []float64{0, 0.5, 1.5, 3.5, 7.5, 15.5, 31.5, 63.5, 127.5, 249.5, 371.5},
			event:    `MountVolume.SetUp failed for volume "s" : secret "later" not found`,
		},
		{
			name:     "unbound claim",
			volume:   v1.Volume{Name: "d", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "claim"}}},
			attempts: []float64{0, 10, 20, 30},
			event:    `Unable to attach or mount volumes: unmounted volumes=[d], unattached volumes=[], failed to process volumes=[d]: error processing PVC ns/claim: PVC is not bound`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			claim := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "claim", Namespace: "ns"}, Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending}}
			client, _ := tokenClient(claim)
			start := time.Unix(1000, 0)
			clock := &fakeClock{t: start}
			m := New(t.TempDir(), WithClient(client), WithMounter(mount.NewFakeMounter(nil)), WithClock(clock.now), WithJitter(noJitter))
			pod := testPod(tc.volume)
			pod.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: tc.volume.Name, MountPath: "/v"}}
			// Look every 100 ms (the kubelet's reconciler period) and note when an attempt failed.
			var failedAt []float64
			end := start.Add(second(tc.attempts[len(tc.attempts)-1] + 1))
			for ; clock.t.Before(end); clock.step(100 * time.Millisecond) {
				res := m.SetUp(context.Background(), pod)
				if !res.Waiting || res.RetryIn <= 0 {
					t.Fatalf("at %v: result %+v", clock.t.Sub(start), res)
				}
				errs := res.errs()
				if len(errs) == 0 {
					continue
				}
				if len(errs) != 1 || errs[0].Error() != tc.event {
					t.Fatalf("at %v: events %v, want %q", clock.t.Sub(start), errs, tc.event)
				}
				failedAt = append(failedAt, clock.t.Sub(start).Seconds())
			}
			if len(failedAt) != len(tc.attempts) {
				t.Fatalf("failed attempts at %v s, want %v s", failedAt, tc.attempts)
			}
			for i := range failedAt {
				if d := failedAt[i] - tc.attempts[i]; d < -0.01 || d > 0.01 {
					t.Fatalf("failed attempts at %v s, want %v s", failedAt, tc.attempts)
				}
			}
		})
	}
}

func TestRetryPolicyWaits(t *testing.T) {
	var waits []time.Duration
	var st retryState
	now := time.Unix(0, 0)
	for i := 0; i < 11; i++ {
		st = mountRetry().afterFailure(st, now, noJitter)
		waits = append(waits, st.Wait)
	}
	want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second,
		16 * time.Second, 32 * time.Second, 64 * time.Second, 122 * time.Second, 122 * time.Second, 122 * time.Second}
	for i := range want {
		if waits[i] != want[i] {
			t.Fatalf("mount waits %v, want %v", waits, want)
		}
	}
	half := func(d time.Duration, f float64) time.Duration { return d + time.Duration(f*float64(d)/2) }
	if st := claimRetry().afterFailure(retryState{Wait: 10 * time.Second}, now, half); st.Wait != 10*time.Second || st.Due != now.Add(12500*time.Millisecond) {
		t.Errorf("claim retry %+v, want a 10 s wait jittered to 12.5 s", st)
	}
}

func TestSetUpOptionalMissingIsEmpty(t *testing.T) {
	client, _ := tokenClient()
	m := New(t.TempDir(), WithClient(client), WithMounter(mount.NewFakeMounter(nil)))
	yes := true
	pod := testPod(v1.Volume{Name: "s", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "none", Optional: &yes}}})
	if errs := m.SetUp(context.Background(), pod).errs(); len(errs) != 0 {
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
		if errs := m.SetUp(context.Background(), pod).errs(); len(errs) != 0 {
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
	if errs := m.SetUp(context.Background(), pod).errs(); len(errs) != 0 {
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
	if errs := m.SetUp(context.Background(), pod).errs(); len(errs) != 0 {
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
		if errs := m.SetUp(context.Background(), p).errs(); len(errs) != 0 {
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
