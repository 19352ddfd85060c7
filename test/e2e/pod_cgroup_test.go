//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/wait"
)

// hostCgroupFile reads a cgroup v1 file of the node from the host (the e2e test runs on it).
func hostCgroupFile(t *testing.T, controller, cgroup, file string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/sys/fs/cgroup", controller, cgroup, file))
	if err != nil {
		t.Fatalf("reading the node's cgroup: %v", err)
	}
	return strings.TrimSpace(string(b))
}

// The pod's cgroup carries what the kubelet gives it: the sum of its containers' memory limits
// and cpu limits as a CFS quota, shares from the sum of the requests; the Burstable QoS cgroup
// the shares of the Burstable pods' requests, the BestEffort one the minimum; kubepods the
// node's memory. Once the pod is deleted its cgroup is gone.
func TestPodCgroupCarriesTheKubeletLimits(t *testing.T) {
	if _, err := os.Stat("/sys/fs/cgroup/memory"); err != nil {
		t.Skip("the node's cgroup v1 memory hierarchy is not visible here")
	}
	ns := newNamespace(t)
	hold := `trap 'exit 0' TERM; sleep 3600 & wait`
	a := busybox("a", hold)
	a.Resources = v1.ResourceRequirements{
		Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("32Mi")},
		Limits:   v1.ResourceList{v1.ResourceCPU: resource.MustParse("200m"), v1.ResourceMemory: resource.MustParse("64Mi")},
	}
	b := busybox("b", hold)
	b.Resources = v1.ResourceRequirements{
		Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("300m"), v1.ResourceMemory: resource.MustParse("16Mi")},
		Limits:   v1.ResourceList{v1.ResourceCPU: resource.MustParse("300m"), v1.ResourceMemory: resource.MustParse("32Mi")},
	}
	created := createPod(t, ns, basePod("limits", a, b))
	waitPod(t, ns, "limits", 2*time.Minute, "Running and Ready", isRunningReady)

	root := "vk-cri-" + nodeName
	podCgroup := fmt.Sprintf("%s/kubepods/burstable/pod%s", root, created.UID)
	for _, c := range []struct{ controller, file, want string }{
		{"memory", "memory.limit_in_bytes", fmt.Sprint(96 << 20)}, // 64Mi + 32Mi
		{"cpu", "cpu.cfs_quota_us", "50000"},                      // 200m + 300m
		{"cpu", "cpu.cfs_period_us", "100000"},
		{"cpu", "cpu.shares", "409"}, // 400m of requests
	} {
		if got := hostCgroupFile(t, c.controller, podCgroup, c.file); got != c.want {
			t.Errorf("pod cgroup %s = %s, want %s", c.file, got, c.want)
		}
	}
	// The QoS cgroups: this pod is the node's only Burstable one during the test.
	if got := hostCgroupFile(t, "cpu", root+"/kubepods/burstable", "cpu.shares"); got != "409" {
		t.Errorf("burstable QoS cgroup cpu.shares = %s, want 409", got)
	}
	if got := hostCgroupFile(t, "cpu", root+"/kubepods/besteffort", "cpu.shares"); got != "2" {
		t.Errorf("besteffort QoS cgroup cpu.shares = %s, want 2", got)
	}
	page := int64(os.Getpagesize())
	if got, want := hostCgroupFile(t, "memory", root+"/kubepods", "memory.limit_in_bytes"), fmt.Sprint(memoryCapacity(t)/page*page); got != want {
		t.Errorf("kubepods memory.limit_in_bytes = %s, want the node's memory %s", got, want)
	}

	deletePodAndWait(t, ns, "limits")
	dir := filepath.Join("/sys/fs/cgroup/memory", podCgroup)
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		_, err := os.Stat(dir)
		return os.IsNotExist(err), nil
	})
	if err != nil {
		t.Errorf("pod cgroup %s still exists after the pod was deleted", dir)
	}
}
