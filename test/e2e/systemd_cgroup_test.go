//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// requireSystemdV2Node skips unless the e2e node's runtime reports the systemd cgroup driver
// (CRI RuntimeConfig, which vk-cri follows) on a cgroup v2 machine whose files can be read
// (VKCRI_E2E_NODE_EXEC, or a local node): the VM lane, make test-vm. (The node's /configz is not
// asked: the API server does not proxy to a node at 127.0.0.1, the VM lane's forwarded address.)
func requireSystemdV2Node(t *testing.T) {
	t.Helper()
	rc, err := s.runtime.Runtime.RuntimeConfig(ctxFor(t, 30*time.Second))
	if err != nil || rc.GetLinux().GetCgroupDriver() != runtimeapi.CgroupDriver_SYSTEMD {
		t.Skipf("the node's runtime does not report the systemd cgroup driver (%v, %v); make test-vm runs this", rc, err)
	}
	if fs := onNode(t, "stat -fc %T /sys/fs/cgroup"); fs != "cgroup2fs" {
		t.Skipf("the node's /sys/fs/cgroup is %s, not cgroup v2", fs)
	}
}

// podSlice is the pod's slice path under the v2 mount, as the kubelet names it with the systemd
// driver and --cgroup-root=/ (the VM lane's): kubepods.slice[/kubepods-<qos>.slice]/kubepods[-<qos>]-pod<uid with '_'>.slice.
func podSlice(qos v1.PodQOSClass, uid string) string {
	id := strings.ReplaceAll(uid, "-", "_")
	switch qos {
	case v1.PodQOSGuaranteed:
		return "/kubepods.slice/kubepods-pod" + id + ".slice"
	case v1.PodQOSBurstable:
		return "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + id + ".slice"
	}
	return "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + id + ".slice"
}

// The systemd driver on cgroup v2, on a real systemd: the pod's cgroup is the kubelet's slice,
// made by systemd (a transient unit that systemctl shows, with the containers' scopes that
// containerd asked runc for under it), carrying the kubelet's v2 values: memory.max the sum of
// the containers' limits, cpu.max their CPU limits, cpu.weight the requests' shares converted;
// the QoS slices the Burstable pods' weight and BestEffort's minimum. The sandbox got the
// expanded slice path as its cgroup parent; the containers see their own limits in their
// namespaced /sys/fs/cgroup; the pod status's resources read back the v2 values; the slice goes
// with the pod.
func TestSystemdPodSlicesCarryTheKubeletV2Values(t *testing.T) {
	requireSystemdV2Node(t)
	ns := newNamespace(t)
	hold := `cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/cpu.max /sys/fs/cgroup/cpu.weight; trap 'exit 0' TERM; sleep 3600 & wait`
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
	be := createPod(t, ns, basePod("besteffort", busybox("c", hold)))
	p := waitPod(t, ns, "limits", 3*time.Minute, "Running and Ready", isRunningReady)
	waitPod(t, ns, "besteffort", 3*time.Minute, "Running and Ready", isRunningReady)

	slice := podSlice(v1.PodQOSBurstable, string(created.UID))
	read := func(cgroup, file string) string {
		return onNode(t, "cat /sys/fs/cgroup"+cgroup+"/"+file)
	}
	// cpu.weight of shares s, as the kubelet's getCPUWeight: 1 + (s-2)*9999/262142.
	weight := func(shares int) string { return fmt.Sprint(1 + (shares-2)*9999/262142) }
	for _, c := range []struct{ cgroup, file, want string }{
		{slice, "memory.max", fmt.Sprint(96 << 20)},                             // 64Mi + 32Mi
		{slice, "cpu.max", "50000 100000"},                                      // 200m + 300m
		{slice, "cpu.weight", weight(409)},                                      // 400m of requests
		{"/kubepods.slice/kubepods-burstable.slice", "cpu.weight", weight(409)}, // the only Burstable pod
		{"/kubepods.slice/kubepods-besteffort.slice", "cpu.weight", weight(2)},
		{podSlice(v1.PodQOSBestEffort, string(be.UID)), "cpu.weight", weight(2)},
		{podSlice(v1.PodQOSBestEffort, string(be.UID)), "memory.max", "max"},
	} {
		if got := read(c.cgroup, c.file); got != c.want {
			t.Errorf("%s/%s = %s, want %s", c.cgroup, c.file, got, c.want)
		}
	}
	unit := slice[strings.LastIndex(slice, "/")+1:]
	status := onNode(t, "systemctl status --no-pager --lines=0 "+unit+" || true")
	t.Logf("systemctl status %s (in the guest):\n%s", unit, status)
	if !strings.Contains(status, "Active: active") || !strings.Contains(status, "cri-containerd-") {
		t.Errorf("the pod's slice is not an active systemd unit holding containerd's scopes:\n%s", status)
	}
	t.Logf("systemd-cgls kubepods.slice (in the guest):\n%s", onNode(t, "systemd-cgls --no-pager -u kubepods.slice | head -40"))

	// Inside the containers: their own limits (a private cgroup namespace on v2).
	wantInside := map[string]string{"a": fmt.Sprint(64<<20) + "\n20000 100000", "b": fmt.Sprint(32<<20) + "\n30000 100000"}
	for name, want := range wantInside {
		if got := podLogs(t, ns, "limits", name); !strings.HasPrefix(got, want) {
			t.Errorf("container %s reads %q from its /sys/fs/cgroup, want %q first", name, got, want)
		}
	}

	// The cgroup parent the sandbox was given: the expanded slice path.
	sandboxes, err := s.runtime.Runtime.ListPodSandbox(ctxFor(t, 30*time.Second), &runtimeapi.PodSandboxFilter{
		LabelSelector: map[string]string{"io.kubernetes.pod.uid": string(created.UID)}})
	if err != nil || len(sandboxes) == 0 {
		t.Fatalf("the pod's sandbox in the guest's runtime: %v (%d)", err, len(sandboxes))
	}
	st, err := s.runtime.Runtime.PodSandboxStatus(ctxFor(t, 30*time.Second), sandboxes[0].Id, true)
	if err != nil {
		t.Fatalf("PodSandboxStatus: %v", err)
	}
	if info := st.GetInfo()["info"]; !strings.Contains(info, `"cgroup_parent":"`+slice+`"`) {
		t.Errorf("the sandbox's cgroup parent is not %s; its info: %.600s", slice, info)
	}

	// The pod status's resources, read back from the v2 files: the weight's round trip keeps the
	// requests as allocated.
	if r := p.Status.Resources; r == nil || r.Requests.Cpu().MilliValue() != 400 || r.Limits.Memory().Value() != 96<<20 || r.Limits.Cpu().MilliValue() != 500 {
		t.Errorf("pod status resources = %+v, want requests cpu 400m, limits cpu 500m memory 96Mi", p.Status.Resources)
	}

	// The summary reads the pod's slice: its memory, and the v2 pressure files (PSI) the kubelet
	// reports since KubeletPSI.
	sum, err := getSummary(ctxFor(t, 30*time.Second))
	if err != nil {
		t.Fatalf("stats summary: %v", err)
	}
	found := false
	for _, ps := range sum.Pods {
		if ps.PodRef.UID != string(created.UID) {
			continue
		}
		found = true
		if ps.Memory == nil || ps.Memory.WorkingSetBytes == nil || *ps.Memory.WorkingSetBytes == 0 || ps.Memory.AvailableBytes == nil ||
			*ps.Memory.AvailableBytes > 96<<20 {
			t.Errorf("pod memory stats from the slice: %+v", ps.Memory)
		}
		if ps.CPU == nil || ps.CPU.PSI == nil || ps.Memory == nil || ps.Memory.PSI == nil {
			t.Errorf("pod stats lack PSI: cpu %+v memory %+v", ps.CPU, ps.Memory)
		}
	}
	if !found {
		t.Errorf("the summary has no stats for pod %s", created.UID)
	}

	deletePodAndWait(t, ns, "limits")
	gone := func() bool {
		return onNode(t, "test -d /sys/fs/cgroup"+slice+" && echo present || echo gone") == "gone"
	}
	deadline := time.Now().Add(30 * time.Second)
	for !gone() {
		if time.Now().After(deadline) {
			t.Fatalf("pod slice %s still exists 30s after the pod was deleted", slice)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// A pod-level memory limit (spec.resources) is the pod slice's memory.max; a container without
// a limit of its own that goes over it is killed by the OOM killer in the pod's cgroup and
// reported OOMKilled, as on the kubelet.
func TestSystemdPodLevelOOMKill(t *testing.T) {
	requireSystemdV2Node(t)
	ns := newNamespace(t)
	pod := basePod("pod-oom", busybox("hog", `echo allocating; x=$(head -c 100663296 /dev/zero | tr "\0" a); echo "allocated ${#x} bytes"`))
	limit := v1.ResourceList{v1.ResourceMemory: resource.MustParse("48Mi")}
	pod.Spec.Resources = &v1.ResourceRequirements{Requests: limit, Limits: limit}
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	created := createPod(t, ns, pod)
	slice := podSlice(v1.PodQOSBurstable, string(created.UID))
	var max string
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for ctx.Err() == nil && max == "" {
		max = onNode(t, "cat /sys/fs/cgroup"+slice+"/memory.max 2>/dev/null || true")
		if max == "" {
			time.Sleep(200 * time.Millisecond)
		}
	}
	if max != fmt.Sprint(48<<20) {
		t.Errorf("pod slice memory.max = %q, want the pod-level limit %d", max, 48<<20)
	}
	p := waitPod(t, ns, "pod-oom", 3*time.Minute, "pod Failed", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodFailed })
	cs, ok := containerStatus(p, "hog")
	if !ok || !isOOMKilled(cs.State) {
		t.Fatalf("want terminated OOMKilled 137 under the pod-level limit, got %s", describeStatus(p))
	}
}
