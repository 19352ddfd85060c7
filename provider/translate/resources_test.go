package translate

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestMilliCPUConversions(t *testing.T) {
	for _, tc := range []struct{ milli, shares, quota int64 }{
		{0, 2, 0},
		{1, 2, 1000},
		{5, 5, 1000},
		{10, 10, 1000},
		{100, 102, 10000},
		{250, 256, 25000},
		{1000, 1024, 100000},
		{1500, 1536, 150000},
		{300000, 262144, 30000000},
	} {
		if got := MilliCPUToShares(tc.milli); got != tc.shares {
			t.Errorf("shares(%dm) = %d, want %d", tc.milli, got, tc.shares)
		}
		if got := MilliCPUToQuota(tc.milli); got != tc.quota {
			t.Errorf("quota(%dm) = %d, want %d", tc.milli, got, tc.quota)
		}
	}
}

func TestOOMScoreAdj(t *testing.T) {
	const capacity = 10 << 30
	mem := func(req string) v1.Container {
		c := ctr("app")
		if req != "" {
			c.Resources.Requests = v1.ResourceList{v1.ResourceMemory: resource.MustParse(req)}
		}
		return c
	}
	cases := []struct {
		name string
		qos  v1.PodQOSClass
		mod  func(*v1.Pod)
		want int64
	}{
		{"guaranteed", v1.PodQOSGuaranteed, nil, -997},
		{"besteffort", v1.PodQOSBestEffort, nil, 1000},
		{"burstable 1Gi of 10Gi", v1.PodQOSBurstable, func(p *v1.Pod) { p.Spec.Containers = []v1.Container{mem("1Gi")} }, 900},
		{"burstable without request: 999, never BestEffort's 1000", v1.PodQOSBurstable, func(p *v1.Pod) { p.Spec.Containers = []v1.Container{mem("")} }, 999},
		{"burstable asking more than the node: floor 3", v1.PodQOSBurstable, func(p *v1.Pod) { p.Spec.Containers = []v1.Container{mem("20Gi")} }, 3},
		{"node-critical", v1.PodQOSBestEffort, func(p *v1.Pod) {
			p.Spec.PriorityClassName, p.Spec.Priority = "system-node-critical", ptrTo(int32(2000001000))
		}, -997},
		{"critical class name without the priority", v1.PodQOSBestEffort, func(p *v1.Pod) { p.Spec.PriorityClassName = "system-node-critical" }, 1000},
	}
	for _, tc := range cases {
		pod := testPod()
		pod.Status.QOSClass = tc.qos
		if tc.mod != nil {
			tc.mod(pod)
		}
		if got := oomScoreAdj(pod, &pod.Spec.Containers[0], capacity); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}

	// A sidecar scores no higher than the pod's smallest regular container.
	always := v1.ContainerRestartPolicyAlways
	side := mem("")
	side.Name, side.RestartPolicy = "side", &always
	pod := testPod(withContainers(mem("2Gi")))
	pod.Spec.InitContainers = []v1.Container{side}
	pod.Status.QOSClass = v1.PodQOSBurstable
	if got := oomScoreAdj(pod, &pod.Spec.InitContainers[0], capacity); got != 800 {
		t.Errorf("sidecar: %d, want 800 (the 2Gi container's score)", got)
	}
}

func TestPodQOSComputedWithoutStatus(t *testing.T) {
	c := ctr("app")
	q := v1.ResourceList{v1.ResourceCPU: resource.MustParse("1"), v1.ResourceMemory: resource.MustParse("1Gi")}
	c.Resources = v1.ResourceRequirements{Requests: q, Limits: q}
	pod := testPod(withContainers(c))
	if got := PodQOS(pod); got != v1.PodQOSGuaranteed {
		t.Errorf("computed QoS %q, want Guaranteed", got)
	}
	pod.Status.QOSClass = v1.PodQOSBurstable
	if got := PodQOS(pod); got != v1.PodQOSBurstable {
		t.Errorf("recorded QoS %q, want the status's Burstable", got)
	}
}
