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
	// cgroup v1's files, or v2's (memory.max, cpu.max "quota period", cpu.weight: shares
	// converted; the container's own cgroup namespace hides its path).
	script := `if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
echo "v2: yes"
echo "mem: $(cat /sys/fs/cgroup/memory.max)"
set -- $(cat /sys/fs/cgroup/cpu.max); q=$1; [ "$q" = max ] && q=-1
echo "quota: $q"
echo "period: $2"
echo "weight: $(cat /sys/fs/cgroup/cpu.weight)"
else
echo "mem: $(cat /sys/fs/cgroup/memory/memory.limit_in_bytes)"
echo "quota: $(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us)"
echo "period: $(cat /sys/fs/cgroup/cpu/cpu.cfs_period_us)"
echo "shares: $(cat /sys/fs/cgroup/cpu/cpu.shares)"
echo "cgroup: $(grep -E ':memory:' /proc/self/cgroup | cut -d: -f3)"
fi
echo "oom: $(cat /proc/self/oom_score_adj)"`
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
	v2 := fieldOf(out, "v2") == "yes"
	want := map[string]string{
		"mem":    fmt.Sprint(128 << 20),
		"quota":  "50000",
		"period": "100000",
		"shares": "204",
		"oom":    fmt.Sprint(wantOOM),
	}
	if v2 {
		// 204 shares as the runtime writes them to the container's cpu.weight: runc 1.3 and
		// later (the stack's 1.5.3) convert on a log scale, ceil(10^((l²+125l)/612 - 7/34)) with
		// l = log2(shares), which gives 29 (the kubelet's own linear conversion, for the pod
		// cgroup, would give 8).
		delete(want, "shares")
		want["weight"] = "29"
	}
	for field, want := range want {
		if got := fieldOf(out, field); got != want {
			t.Errorf("%s = %q, want %q\n%s", field, got, want, out)
		}
	}
	wantCgroup := fmt.Sprintf("/vk-cri-%s/kubepods/burstable/pod%s/", nodeName, created.UID)
	if got := fieldOf(out, "cgroup"); !v2 && !strings.HasPrefix(got, wantCgroup) {
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
	want = map[string]string{"quota": "-1", "shares": "2", "oom": "1000"}
	if v2 {
		delete(want, "shares")
		want["weight"] = "1"
	}
	for field, want := range want {
		if got := fieldOf(out, field); got != want {
			t.Errorf("BestEffort: %s = %q, want %q\n%s", field, got, want, out)
		}
	}
	wantCgroup = fmt.Sprintf("/vk-cri-%s/kubepods/besteffort/pod%s/", nodeName, created.UID)
	if got := fieldOf(out, "cgroup"); !v2 && !strings.HasPrefix(got, wantCgroup) {
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
