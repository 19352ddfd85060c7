//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Requests and limits reach the container's cgroups (read from inside), the OOM score follows
// the QoS class, the pod's cgroup sits under vk-cri's cgroup root by QoS class, and the status
// carries the QoS class.
func TestEnvCgroupLimitsFromResources(t *testing.T) {
	ns := newNamespace(t)
	script := `echo "mem: $(cat /sys/fs/cgroup/memory/memory.limit_in_bytes)"
echo "quota: $(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us)"
echo "period: $(cat /sys/fs/cgroup/cpu/cpu.cfs_period_us)"
echo "shares: $(cat /sys/fs/cgroup/cpu/cpu.shares)"
echo "oom: $(cat /proc/self/oom_score_adj)"
echo "cgroup: $(grep -E ':memory:' /proc/self/cgroup | cut -d: -f3)"`
	burst := busybox("main", script)
	burst.Resources = v1.ResourceRequirements{
		Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("200m"), v1.ResourceMemory: resource.MustParse("100Mi")},
		Limits:   v1.ResourceList{v1.ResourceCPU: resource.MustParse("500m"), v1.ResourceMemory: resource.MustParse("128Mi")},
	}
	pod := basePod("burstable", burst)
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	created := createPod(t, ns, pod)
	p := waitPod(t, ns, "burstable", 2*time.Minute, "Succeeded", isSucceeded)
	if p.Status.QOSClass != v1.PodQOSBurstable {
		t.Errorf("qosClass %q, want Burstable", p.Status.QOSClass)
	}
	out := podLogs(t, ns, "burstable", "main")
	memCap := memoryCapacity(t)
	wantOOM := 1000 - 1000*(100<<20)/memCap
	for field, want := range map[string]string{
		"mem":    fmt.Sprint(128 << 20),
		"quota":  "50000",
		"period": "100000",
		"shares": "204",
		"oom":    fmt.Sprint(wantOOM),
	} {
		if got := fieldOf(out, field); got != want {
			t.Errorf("%s = %q, want %q\n%s", field, got, want, out)
		}
	}
	wantCgroup := fmt.Sprintf("/vk-cri-%s/kubepods/burstable/pod%s/", nodeName, created.UID)
	if got := fieldOf(out, "cgroup"); !strings.HasPrefix(got, wantCgroup) {
		t.Errorf("memory cgroup %q, want under %s", got, wantCgroup)
	}

	// BestEffort: no limits, minimal shares, OOM score 1000, the besteffort cgroup.
	be := basePod("besteffort", busybox("main", script))
	be.Spec.RestartPolicy = v1.RestartPolicyNever
	created = createPod(t, ns, be)
	p = waitPod(t, ns, "besteffort", 2*time.Minute, "Succeeded", isSucceeded)
	if p.Status.QOSClass != v1.PodQOSBestEffort {
		t.Errorf("qosClass %q, want BestEffort", p.Status.QOSClass)
	}
	out = podLogs(t, ns, "besteffort", "main")
	for field, want := range map[string]string{"quota": "-1", "shares": "2", "oom": "1000"} {
		if got := fieldOf(out, field); got != want {
			t.Errorf("BestEffort: %s = %q, want %q\n%s", field, got, want, out)
		}
	}
	wantCgroup = fmt.Sprintf("/vk-cri-%s/kubepods/besteffort/pod%s/", nodeName, created.UID)
	if got := fieldOf(out, "cgroup"); !strings.HasPrefix(got, wantCgroup) {
		t.Errorf("BestEffort memory cgroup %q, want under %s", got, wantCgroup)
	}
}

// memoryCapacity is the e2e node's memory capacity in bytes.
func memoryCapacity(t *testing.T) int64 {
	t.Helper()
	n, err := s.kube.CoreV1().Nodes().Get(ctxFor(t, 30*time.Second), nodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n.Status.Capacity.Memory().Value()
}
