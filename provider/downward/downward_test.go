package downward

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func testPod() *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "ns1", UID: "uid-1",
			Labels:      map[string]string{"app": "web", "tier": "front"},
			Annotations: map[string]string{"note": "say \"hi\"\n", "Upper.Case/Key": "v"},
		},
		Spec: v1.PodSpec{
			NodeName: "node-1", ServiceAccountName: "sa", RestartPolicy: v1.RestartPolicyAlways,
			SchedulerName: "default-scheduler",
			InitContainers: []v1.Container{{Name: "init", Resources: v1.ResourceRequirements{
				Limits: v1.ResourceList{v1.ResourceMemory: resource.MustParse("32Mi")},
			}}},
			Containers: []v1.Container{
				{Name: "main", Resources: v1.ResourceRequirements{
					Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("250m"), v1.ResourceMemory: resource.MustParse("64Mi")},
					Limits:   v1.ResourceList{v1.ResourceCPU: resource.MustParse("1250m"), v1.ResourceMemory: resource.MustParse("128Mi")},
				}},
				{Name: "nolimits"},
			},
		},
		Status: v1.PodStatus{Phase: v1.PodPending},
	}
}

func TestFieldValue(t *testing.T) {
	rt := RuntimeInfo{PodIPs: []string{"10.88.0.5", "fd00::5"}, HostIPs: []string{"192.168.1.2", "fd01::2"}}
	tests := []struct {
		path, apiVersion, want string
		wantErr                bool
	}{
		{path: "metadata.name", want: "web"},
		{path: "metadata.namespace", want: "ns1"},
		{path: "metadata.uid", want: "uid-1"},
		{path: "metadata.labels", want: "app=\"web\"\ntier=\"front\""},
		{path: "metadata.annotations", want: "Upper.Case/Key=\"v\"\nnote=\"say \\\"hi\\\"\\n\""},
		{path: "metadata.labels['app']", want: "web"},
		{path: "metadata.labels['missing']", want: ""},
		{path: "metadata.annotations['Upper.Case/Key']", want: "v"},
		{path: "metadata.labels['bad key!']", wantErr: true},
		{path: "metadata.name['x']", wantErr: true},
		{path: "spec.nodeName", want: "node-1"},
		{path: "spec.host", want: "node-1"},
		{path: "spec.serviceAccountName", want: "sa"},
		{path: "spec.restartPolicy", want: "Always"},
		{path: "spec.schedulerName", want: "default-scheduler"},
		{path: "status.phase", want: "Pending"},
		{path: "status.podIP", want: "10.88.0.5"},
		{path: "status.podIPs", want: "10.88.0.5,fd00::5"},
		{path: "status.hostIP", want: "192.168.1.2"},
		{path: "status.hostIPs", want: "192.168.1.2,fd01::2"},
		{path: "metadata.name", apiVersion: "v1", want: "web"},
		{path: "metadata.name", apiVersion: "v2", wantErr: true},
		{path: "spec.containers", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.path+tt.apiVersion, func(t *testing.T) {
			got, err := FieldValue(testPod(), &v1.ObjectFieldSelector{APIVersion: tt.apiVersion, FieldPath: tt.path}, rt)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestFieldValueWithoutIPs(t *testing.T) {
	pod := testPod()
	if got, err := FieldValue(pod, &v1.ObjectFieldSelector{FieldPath: "status.podIP"}, RuntimeInfo{}); err != nil || got != "" {
		t.Errorf("podIP of a host-less sandbox = %q, %v; want empty", got, err)
	}
	if _, err := FieldValue(pod, &v1.ObjectFieldSelector{FieldPath: "status.hostIP"}, RuntimeInfo{}); err == nil {
		t.Error("hostIP without node IPs: want an error")
	}
}

func TestResourceValue(t *testing.T) {
	allocatable := v1.ResourceList{
		v1.ResourceCPU:              resource.MustParse("2"),
		v1.ResourceMemory:           resource.MustParse("4Gi"),
		v1.ResourceEphemeralStorage: resource.MustParse("10Gi"),
	}
	tests := []struct {
		name      string
		self      string
		container string
		res       string
		divisor   string
		podLimits v1.ResourceList
		want      string
		wantErr   bool
	}{
		{name: "cpu limit in cores rounds up", self: "main", res: "limits.cpu", want: "2"},
		{name: "cpu limit in millicores", self: "main", res: "limits.cpu", divisor: "1m", want: "1250"},
		{name: "cpu request", self: "main", res: "requests.cpu", divisor: "1m", want: "250"},
		{name: "memory limit in bytes", self: "main", res: "limits.memory", want: "134217728"},
		{name: "memory limit in Mi", self: "main", res: "limits.memory", divisor: "1Mi", want: "128"},
		{name: "memory request in Mi", self: "main", res: "requests.memory", divisor: "1Mi", want: "64"},
		{name: "missing request is zero", self: "nolimits", res: "requests.memory", want: "0"},
		{name: "missing cpu limit is allocatable", self: "nolimits", res: "limits.cpu", want: "2"},
		{name: "missing memory limit is allocatable", self: "nolimits", res: "limits.memory", divisor: "1Gi", want: "4"},
		{name: "missing storage limit is allocatable", self: "nolimits", res: "limits.ephemeral-storage", divisor: "1Gi", want: "10"},
		{name: "pod-level limit before allocatable", self: "nolimits", res: "limits.memory", divisor: "1Mi",
			podLimits: v1.ResourceList{v1.ResourceMemory: resource.MustParse("512Mi")}, want: "512"},
		{name: "named container", self: "nolimits", container: "main", res: "limits.cpu", divisor: "1m", want: "1250"},
		{name: "named init container", container: "init", res: "limits.memory", divisor: "1Mi", want: "32"},
		{name: "hugepages", self: "main", res: "limits.hugepages-2Mi", want: "0"},
		{name: "unknown container", container: "nope", res: "limits.cpu", wantErr: true},
		{name: "unknown resource", self: "main", res: "limits.gpu", wantErr: true},
		{name: "no kind", self: "main", res: "cpu", wantErr: true},
		{name: "no container at all", res: "limits.cpu", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := testPod()
			if tt.podLimits != nil {
				pod.Spec.Resources = &v1.ResourceRequirements{Limits: tt.podLimits}
			}
			var self *v1.Container
			if tt.self != "" {
				self = findContainer(pod, tt.self)
			}
			fs := &v1.ResourceFieldSelector{ContainerName: tt.container, Resource: tt.res}
			if tt.divisor != "" {
				fs.Divisor = resource.MustParse(tt.divisor)
			}
			got, err := ResourceValue(pod, self, fs, allocatable)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestEffectiveLimitsLeavesSpecAlone(t *testing.T) {
	pod := testPod()
	c := findContainer(pod, "nolimits")
	EffectiveLimits(pod, c, v1.ResourceList{v1.ResourceCPU: resource.MustParse("2")})
	if c.Resources.Limits != nil {
		t.Errorf("container spec changed: %v", c.Resources.Limits)
	}
}
