package volumes

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/mount-utils"
)

func TestContainerMounts(t *testing.T) {
	client, _ := tokenClient(&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: "ns"}, Data: map[string]string{"k": "v"}})
	m := New(t.TempDir(), WithClient(client), WithMounter(mount.NewFakeMounter(nil)))
	hostDir := t.TempDir()
	pod := testPod(
		v1.Volume{Name: "cfg", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}}}},
		v1.Volume{Name: "host", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: hostDir}}},
		v1.Volume{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
	)
	if errs := m.SetUp(context.Background(), pod).errs(); len(errs) != 0 {
		t.Fatal(errs)
	}
	h2c, bidi, none := v1.MountPropagationHostToContainer, v1.MountPropagationBidirectional, v1.MountPropagationNone
	c := &v1.Container{Name: "c", VolumeMounts: []v1.VolumeMount{
		{Name: "cfg", MountPath: "/cfg"},
		{Name: "host", MountPath: "/host", MountPropagation: &h2c},
		{Name: "host", MountPath: "/host-ro", ReadOnly: true, MountPropagation: &none},
		{Name: "scratch", MountPath: "/scratch", MountPropagation: &bidi},
	}}
	got, err := m.ContainerMounts(pod, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []*runtimeapi.Mount{
		{ContainerPath: "/cfg", HostPath: m.layout.volumeDir(pod.UID, pluginConfigMap, "cfg"), Readonly: true, Propagation: runtimeapi.MountPropagation_PROPAGATION_PRIVATE},
		{ContainerPath: "/host", HostPath: hostDir, Propagation: runtimeapi.MountPropagation_PROPAGATION_HOST_TO_CONTAINER},
		{ContainerPath: "/host-ro", HostPath: hostDir, Readonly: true, Propagation: runtimeapi.MountPropagation_PROPAGATION_PRIVATE},
		{ContainerPath: "/scratch", HostPath: m.layout.volumeDir(pod.UID, pluginEmptyDir, "scratch"), Propagation: runtimeapi.MountPropagation_PROPAGATION_BIDIRECTIONAL},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d mounts, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].String() != want[i].String() {
			t.Errorf("mount %d:\n got  %v\n want %v", i, got[i], want[i])
		}
	}

	// A volume the pod does not have, and a subPathExpr whose variable is unset, are refused.
	if _, err := m.ContainerMounts(pod, &v1.Container{Name: "c", VolumeMounts: []v1.VolumeMount{{Name: "nope", MountPath: "/x"}}}, nil); err == nil {
		t.Error("a mount of an unknown volume was accepted")
	}
	expand := func(s string) (string, error) { return ExpandSubPath(s, map[string]string{}) }
	if _, err := m.ContainerMounts(pod, &v1.Container{Name: "c", VolumeMounts: []v1.VolumeMount{{Name: "scratch", MountPath: "/x", SubPathExpr: "$(UNSET)"}}}, expand); err == nil {
		t.Error("a subPathExpr with an unset variable was accepted")
	}
	for _, sub := range []string{"/etc", "../x", "a/../../b"} {
		if _, err := m.ContainerMounts(pod, &v1.Container{Name: "c", VolumeMounts: []v1.VolumeMount{{Name: "scratch", MountPath: "/x", SubPath: sub}}}, nil); err == nil {
			t.Errorf("subPath %q accepted", sub)
		}
	}
}
