//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/opencontainers/cgroups"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

var reTokenSuffix = regexp.MustCompile(`kube-api-access-[a-z0-9]{5}`)

// shapeJSON renders a status field as the API shows it, the token volume's suffix normalised.
func shapeJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return reTokenSuffix.ReplaceAllString(string(b), "kube-api-access-x")
}

func resourceList(pairs ...string) v1.ResourceList {
	out := v1.ResourceList{}
	for i := 0; i < len(pairs); i += 2 {
		out[v1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return out
}

// The fields the kubelet v1.37 writes beyond states and conditions, for the pod the lead diffed
// against it: resources, allocatedResources and volumeMounts of init, sidecar and regular
// containers (the service-account token's mount included), and the pod's aggregate resources.
func TestShapeResourcesAndVolumeMounts(t *testing.T) {
	ns := newNamespace(t)
	always := v1.ContainerRestartPolicyAlways
	initC := busybox("init", "echo init > /data/x")
	initC.VolumeMounts = []v1.VolumeMount{{Name: "data", MountPath: "/data"}}
	side := busybox("side", "sleep 3600")
	side.RestartPolicy = &always
	side.Resources.Requests = resourceList("cpu", "50m", "memory", "32Mi")
	main := busybox("main", "sleep 3600")
	main.Resources.Limits = resourceList("cpu", "200m", "memory", "64Mi")
	main.VolumeMounts = []v1.VolumeMount{{Name: "data", MountPath: "/data"}, {Name: "data", MountPath: "/ro", ReadOnly: true}}
	plain := busybox("plain", "sleep 3600")
	pod := basePod("shapes", main, plain)
	pod.Spec.InitContainers = []v1.Container{initC, side}
	pod.Spec.AutomountServiceAccountToken = nil // the token's mount is one of the fields
	pod.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}}
	createPod(t, ns, pod)
	got := waitPod(t, ns, "shapes", 90*time.Second, "running and ready", isRunningReady)

	token := `{"name":"kube-api-access-x","mountPath":"/var/run/secrets/kubernetes.io/serviceaccount","readOnly":true,"recursiveReadOnly":"Disabled"}`
	want := map[string][3]string{ // resources, allocatedResources, volumeMounts
		"init":  {`{}`, `null`, `[{"name":"data","mountPath":"/data"},` + token + `]`},
		"side":  {`{"requests":{"cpu":"50m","memory":"32Mi"}}`, `{"cpu":"50m","memory":"32Mi"}`, `[` + token + `]`},
		"main":  {`{"limits":{"cpu":"200m","memory":"64Mi"},"requests":{"cpu":"200m","memory":"64Mi"}}`, `{"cpu":"200m","memory":"64Mi"}`, `[{"name":"data","mountPath":"/data"},{"name":"data","mountPath":"/ro","readOnly":true,"recursiveReadOnly":"Disabled"},` + token + `]`},
		"plain": {`{}`, `null`, `[` + token + `]`},
	}
	seen := 0
	for _, cs := range append(append([]v1.ContainerStatus{}, got.Status.InitContainerStatuses...), got.Status.ContainerStatuses...) {
		w, ok := want[cs.Name]
		if !ok {
			continue
		}
		seen++
		for i, f := range []struct {
			field string
			v     any
		}{{"resources", cs.Resources}, {"allocatedResources", cs.AllocatedResources}, {"volumeMounts", cs.VolumeMounts}} {
			if g := shapeJSON(t, f.v); g != w[i] {
				t.Errorf("container %s %s = %s, want %s", cs.Name, f.field, g, w[i])
			}
		}
	}
	if seen != len(want) {
		t.Errorf("saw %d of the %d container statuses: %s", seen, len(want), describeStatus(got))
	}
	if g, w := shapeJSON(t, got.Status.AllocatedResources), `{"cpu":"250m","memory":"96Mi"}`; g != w {
		t.Errorf("pod allocatedResources = %s, want %s (init and sidecar aggregation)", g, w)
	}

	// Once the pod runs, the kubelet reads its pod cgroup back: this Burstable pod's cgroup has
	// no memory limit (plain declares none), which cgroup v1 reads as its largest value; the
	// cpu limit stays the containers' sum.
	wantPod := `{"limits":{"cpu":"200m","memory":"9007199254740988Ki"},"requests":{"cpu":"250m","memory":"96Mi"}}`
	if cgroups.IsCgroup2UnifiedMode() {
		wantPod = `{"limits":{"cpu":"200m","memory":"64Mi"},"requests":{"cpu":"232m","memory":"96Mi"}}`
	}
	waitPod(t, ns, "shapes", 45*time.Second, "pod resources "+wantPod, func(p *v1.Pod) bool {
		return shapeJSON(t, p.Status.Resources) == wantPod
	})
}

// A Guaranteed pod's resources are its limits (the memory limit as the kernel keeps it once
// running); a finished pod's containers report the spec's values.
func TestShapeGuaranteedAndFinishedPods(t *testing.T) {
	ns := newNamespace(t)
	g := busybox("c", "sleep 3600")
	g.Resources.Limits = resourceList("cpu", "100m", "memory", "100M")
	createPod(t, ns, basePod("guaranteed", g))

	reqOnly := busybox("requests-only", "sleep 1")
	reqOnly.Resources.Requests = resourceList("cpu", "10m", "ephemeral-storage", "1Gi")
	memLimit := busybox("memory-limit", "sleep 1")
	memLimit.Resources.Limits = resourceList("memory", "16Mi")
	finished := basePod("finished", reqOnly, memLimit)
	finished.Spec.RestartPolicy = v1.RestartPolicyNever
	createPod(t, ns, finished)

	wantG := `{"limits":{"cpu":"100m","memory":"97656Ki"},"requests":{"cpu":"100m","memory":"100M"}}`
	p := waitPod(t, ns, "guaranteed", 90*time.Second, "pod resources "+wantG, func(p *v1.Pod) bool {
		return isRunningReady(p) && shapeJSON(t, p.Status.Resources) == wantG
	})
	if g, w := shapeJSON(t, p.Status.ContainerStatuses[0].Resources), `{"limits":{"cpu":"100m","memory":"100M"},"requests":{"cpu":"100m","memory":"100M"}}`; g != w {
		t.Errorf("container resources = %s, want %s", g, w)
	}
	if p.Status.ContainerStatuses[0].VolumeMounts != nil {
		t.Errorf("volumeMounts %v, want none (no mounts, no token)", p.Status.ContainerStatuses[0].VolumeMounts)
	}

	f := waitPod(t, ns, "finished", 90*time.Second, "Succeeded", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodSucceeded })
	want := map[string]string{
		"requests-only": `{"requests":{"cpu":"10m","ephemeral-storage":"1Gi"}} {"cpu":"10m","ephemeral-storage":"1Gi"}`,
		"memory-limit":  `{"limits":{"memory":"16Mi"},"requests":{"memory":"16Mi"}} {"memory":"16Mi"}`,
	}
	for _, cs := range f.Status.ContainerStatuses {
		if g := shapeJSON(t, cs.Resources) + " " + shapeJSON(t, cs.AllocatedResources); g != want[cs.Name] {
			t.Errorf("finished container %s resources and allocatedResources = %s, want %s", cs.Name, g, want[cs.Name])
		}
	}
	if g, w := shapeJSON(t, f.Status.AllocatedResources), `{"cpu":"10m","ephemeral-storage":"1Gi","memory":"16Mi"}`; g != w {
		t.Errorf("finished pod allocatedResources = %s, want %s", g, w)
	}
}

// The kubelet v1.37 reports whether it runs in a user namespace; vk-cri on this host does not.
func TestShapeNodeRunningInUserNamespace(t *testing.T) {
	n, err := s.kube.CoreV1().Nodes().Get(ctxFor(t, 30*time.Second), nodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := n.Status.NodeInfo.RunningInUserNamespace; got == nil || *got {
		t.Errorf("nodeInfo.runningInUserNamespace = %v, want false", got)
	}
}

// A container whose start fails: the Failed event says "Error: " and the runtime's message,
// without gRPC's framing, as the kubelet's does; so does the RunContainerError waiting state.
func TestShapeFailedStartMessageWithoutGRPCFraming(t *testing.T) {
	ns := newNamespace(t)
	c := v1.Container{Name: "c", Image: image("busybox:latest"), Command: []string{"/does-not-exist"}}
	createPod(t, ns, basePod("bad-command", c))
	ctx := ctxFor(t, 90*time.Second)
	var msg string
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		evs, err := s.kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=bad-command,reason=Failed"})
		if err != nil || len(evs.Items) == 0 {
			return false, nil
		}
		msg = evs.Items[0].Message
		return true, nil
	})
	if err != nil {
		t.Fatalf("no Failed event: %v", err)
	}
	if !strings.HasPrefix(msg, "Error: failed to create containerd task: ") || strings.Contains(msg, "rpc error") || !strings.Contains(msg, "/does-not-exist") {
		t.Errorf("Failed event message %q: want \"Error: \" and containerd's message, without gRPC framing", msg)
	}
	p := waitPod(t, ns, "bad-command", 60*time.Second, "RunContainerError", func(p *v1.Pod) bool {
		cs := p.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].State.Waiting != nil && cs[0].State.Waiting.Reason == "RunContainerError"
	})
	if w := p.Status.ContainerStatuses[0].State.Waiting.Message; strings.Contains(w, "rpc error") || "Error: "+w != msg {
		t.Errorf("waiting message %q: want the event's message %q without \"Error: \"", w, msg)
	}
}
