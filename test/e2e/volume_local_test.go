//go:build e2e

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestVolumeLocalPersistentVolume: a local PersistentVolume whose nodeAffinity names the vk-cri
// node, in a WaitForFirstConsumer class, claimed by pods without a node selector. The scheduler
// binds the claim and places the pods on the node through the volume's affinity; a writable pod
// writes to it (with the pod's fsGroup, as the kubelet's local plugin gives it) and a pod mounting
// the claim readOnly reads it and cannot write.
func TestVolumeLocalPersistentVolume(t *testing.T) {
	ns := newNamespace(t)
	ctx := ctxFor(t, 3*time.Minute)
	path := t.TempDir()
	if err := os.WriteFile(filepath.Join(path, "data"), []byte("on the local volume\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	name := "vk-local-" + ns
	waitFirst := storagev1.VolumeBindingWaitForFirstConsumer
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: "kubernetes.io/no-provisioner", VolumeBindingMode: &waitFirst}
	if _, err := s.kube.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = s.kube.StorageV1().StorageClasses().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	pv := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1.PersistentVolumeSpec{
		AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}, StorageClassName: name,
		Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Mi")},
		PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
		PersistentVolumeSource:        v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: path}},
		NodeAffinity: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
			MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{nodeName}}}}}}}}}
	if _, err := s.kube.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = s.kube.CoreV1().PersistentVolumes().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	claim := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data"}, Spec: v1.PersistentVolumeClaimSpec{
		AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}, StorageClassName: &name,
		Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Mi")}}}}
	if _, err := s.kube.CoreV1().PersistentVolumeClaims(ns).Create(ctx, claim, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	claimPod := func(podName, script string, readOnly bool) *v1.Pod {
		p := neverRestart(basePod(podName, busyboxWith("c", script, v1.VolumeMount{Name: "d", MountPath: "/data"})))
		p.Spec.NodeSelector = nil // placed by the volume's node affinity
		p.Spec.Volumes = []v1.Volume{{Name: "d", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data", ReadOnly: readOnly}}}}
		return p
	}
	writer := claimPod("writer", `cat /data/data; echo from-pod > /data/new && echo wrote; stat -c 'group %g' /data`, false)
	group := int64(2345)
	writer.Spec.SecurityContext = &v1.PodSecurityContext{FSGroup: &group}
	createPod(t, ns, writer)
	got := waitPod(t, ns, "writer", 2*time.Minute, "finished", func(p *v1.Pod) bool {
		return p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed
	})
	if got.Spec.NodeName != nodeName {
		t.Fatalf("writer ran on %q, want %s (the volume's node affinity)", got.Spec.NodeName, nodeName)
	}
	log := podLog(t, ns, "writer", "c")
	if got.Status.Phase != v1.PodSucceeded {
		t.Fatalf("writer %s: %s\n%s", got.Status.Phase, describeStatus(got), log)
	}
	for _, want := range []string{"on the local volume\n", "wrote\n", "group 2345\n"} {
		if !strings.Contains(log, want) {
			t.Errorf("writer's log lacks %q:\n%s", want, log)
		}
	}
	if b, err := os.ReadFile(filepath.Join(path, "new")); err != nil || string(b) != "from-pod\n" {
		t.Errorf("file the pod wrote, on the node: %q %v", b, err)
	}
	if c, err := s.kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data", metav1.GetOptions{}); err != nil || c.Spec.VolumeName != name {
		t.Errorf("claim bound to %q (%v), want %s", c.Spec.VolumeName, err, name)
	}

	createPod(t, ns, claimPod("reader", `cat /data/new; if (echo x > /data/other) 2>/dev/null; then echo writable; else echo read-only; fi`, true))
	got = waitPod(t, ns, "reader", 2*time.Minute, "Succeeded", isPhase(v1.PodSucceeded))
	if got.Spec.NodeName != nodeName {
		t.Errorf("reader ran on %q, want %s", got.Spec.NodeName, nodeName)
	}
	if log := podLog(t, ns, "reader", "c"); log != "from-pod\nread-only\n" {
		t.Errorf("reader's log %q, want the volume's file and a read-only mount", log)
	}
	if _, err := os.Stat(filepath.Join(path, "other")); !os.IsNotExist(err) {
		t.Errorf("the pod wrote through a read-only claim: %v", err)
	}
}
