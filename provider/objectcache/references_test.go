package objectcache

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPodReferences(t *testing.T) {
	ref := func(name string) v1.LocalObjectReference { return v1.LocalObjectReference{Name: name} }
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"},
		Spec: v1.PodSpec{
			Volumes: []v1.Volume{
				{Name: "a", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: ref("vol-cm")}}},
				{Name: "b", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "vol-s"}}},
				{Name: "c", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{
					{ConfigMap: &v1.ConfigMapProjection{LocalObjectReference: ref("kube-root-ca.crt")}},
					{Secret: &v1.SecretProjection{LocalObjectReference: ref("proj-s")}},
					{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Path: "token"}},
				}}}},
				{Name: "d", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
			},
			ImagePullSecrets: []v1.LocalObjectReference{ref("pull"), ref("")},
			InitContainers: []v1.Container{{Name: "init", EnvFrom: []v1.EnvFromSource{
				{ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: ref("init-cm")}},
				{SecretRef: &v1.SecretEnvSource{LocalObjectReference: ref("init-s")}},
			}}},
			Containers: []v1.Container{{Name: "app", Env: []v1.EnvVar{
				{Name: "LIT", Value: "x"},
				{Name: "FIELD", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
				{Name: "CM", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{LocalObjectReference: ref("vol-cm"), Key: "k"}}},
				{Name: "S", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{LocalObjectReference: ref("env-s"), Key: "k"}}},
			}}},
			EphemeralContainers: []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "debug",
				EnvFrom: []v1.EnvFromSource{{ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: ref("debug-cm")}}}}}},
		},
	}
	want := references{
		{KindConfigMap, "ns", "vol-cm"}:           true, // a volume and an env var: a volume's
		{KindSecret, "ns", "vol-s"}:               true,
		{KindConfigMap, "ns", "kube-root-ca.crt"}: true,
		{KindSecret, "ns", "proj-s"}:              true,
		{KindSecret, "ns", "pull"}:                false,
		{KindConfigMap, "ns", "init-cm"}:          false,
		{KindSecret, "ns", "init-s"}:              false,
		{KindSecret, "ns", "env-s"}:               false,
		{KindConfigMap, "ns", "debug-cm"}:         false,
	}
	if diff := cmp.Diff(want, podReferences(pod)); diff != "" {
		t.Errorf("references (-want +got):\n%s", diff)
	}
}
