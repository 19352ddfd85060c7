//go:build e2e

package e2e

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

func serverContainer(name string) v1.Container {
	return v1.Container{
		Name:  name,
		Image: image("vktest:latest"),
		Args:  []string{"serve", "--port", "8080"},
		Ports: []v1.ContainerPort{{ContainerPort: 8080}},
	}
}

func TestPodScheduledRunsAndAnswersHTTP(t *testing.T) {
	ns := newNamespace(t)
	created := createPod(t, ns, basePod("web", serverContainer("web")))
	p := waitPod(t, ns, "web", 2*time.Minute, "Running and Ready", isRunningReady)

	if p.Spec.NodeName != nodeName {
		t.Fatalf("scheduled to %q, want %q", p.Spec.NodeName, nodeName)
	}
	if p.UID != created.UID {
		t.Fatalf("UID changed")
	}
	cs := p.Status.ContainerStatuses[0]
	if !strings.HasPrefix(cs.ContainerID, containerIDPrefix()) || cs.ImageID == "" || cs.Image == "" {
		t.Errorf("container status identity: id=%q image=%q imageID=%q", cs.ContainerID, cs.Image, cs.ImageID)
	}
	if cs.State.Running == nil || cs.State.Running.StartedAt.IsZero() || cs.Started == nil || !*cs.Started || !cs.Ready {
		t.Errorf("container state: %+v started=%v ready=%v", cs.State, cs.Started, cs.Ready)
	}
	if p.Status.PodIP == "" || p.Status.HostIP != s.env["NODE_IP"] || p.Status.StartTime == nil {
		t.Fatalf("pod IPs/startTime: podIP=%q hostIP=%q startTime=%v", p.Status.PodIP, p.Status.HostIP, p.Status.StartTime)
	}

	client := &http.Client{Timeout: 2 * time.Second}
	var body string
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		resp, err := client.Get("http://" + p.Status.PodIP + ":8080/")
		if err != nil {
			return false, nil
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		body = string(b)
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		t.Fatalf("GET http://%s:8080/ from the host: %v", p.Status.PodIP, err)
	}
	if !strings.Contains(body, "hello from web") {
		t.Errorf("body %q does not name the pod's hostname", body)
	}
}

func TestContainerExitCodesGivePhases(t *testing.T) {
	ns := newNamespace(t)
	for _, tc := range []struct {
		name  string
		code  string
		phase v1.PodPhase
		exit  int32
		why   string
	}{
		{"exit0", "0", v1.PodSucceeded, 0, "Completed"},
		{"exit1", "1", v1.PodFailed, 1, "Error"},
	} {
		pod := basePod(tc.name, busybox("main", "exit "+tc.code))
		pod.Spec.RestartPolicy = v1.RestartPolicyNever
		createPod(t, ns, pod)
		p := waitPod(t, ns, tc.name, 2*time.Minute, string(tc.phase), func(p *v1.Pod) bool { return p.Status.Phase == tc.phase })
		term := p.Status.ContainerStatuses[0].State.Terminated
		if term == nil || term.ExitCode != tc.exit || term.Reason != tc.why {
			t.Errorf("%s: terminated state %+v, want exit %d reason %s", tc.name, term, tc.exit, tc.why)
		}
		if term != nil && (term.StartedAt.IsZero() || term.FinishedAt.IsZero() || term.ContainerID == "") {
			t.Errorf("%s: terminated state lacks times or container ID: %+v", tc.name, term)
		}
		for _, c := range p.Status.Conditions {
			if c.Type == v1.PodReady && c.Status != v1.ConditionFalse {
				t.Errorf("%s: Ready condition %+v on a finished pod", tc.name, c)
			}
		}
	}
}

func TestDeleteRemovesContainersAndSandbox(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, basePod("doomed", serverContainer("web"), v1.Container{Name: "sleeper", Image: image("busybox:latest"), Command: []string{"sleep", "3600"}}))
	p := waitPod(t, ns, "doomed", 2*time.Minute, "Running and Ready", isRunningReady)
	sbs, cs := runtimeObjects(t, string(p.UID))
	if len(sbs) != 1 || len(cs) != 2 {
		t.Fatalf("runtime holds %d sandboxes and %d containers for the pod, want 1 and 2", len(sbs), len(cs))
	}
	// busybox sleep as PID 1 ignores SIGTERM: this also checks the grace period ends in a kill.
	if err := s.kube.CoreV1().Pods(ns).Delete(ctxFor(t, 10*time.Second), "doomed", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting: %v", err)
	}
	waitPodGone(t, ns, "doomed", time.Minute)
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		sbs, cs := runtimeObjects(t, string(p.UID))
		return len(sbs) == 0 && len(cs) == 0, nil
	})
	if err != nil {
		sbs, cs := runtimeObjects(t, string(p.UID))
		t.Fatalf("runtime still holds %d sandboxes and %d containers of the deleted pod", len(sbs), len(cs))
	}
}

// The kubelet removes a pod from the API as soon as its containers have stopped, not at the end
// of the grace period.
func TestDeletedPodLeavesTheAPIOnceItsContainersStop(t *testing.T) {
	ns := newNamespace(t)
	pod := basePod("quick", serverContainer("web"))
	grace := int64(120)
	pod.Spec.TerminationGracePeriodSeconds = &grace
	createPod(t, ns, pod)
	waitPod(t, ns, "quick", 2*time.Minute, "Running and Ready", isRunningReady)
	if err := s.kube.CoreV1().Pods(ns).Delete(ctxFor(t, 10*time.Second), "quick", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting: %v", err)
	}
	// vktest exits on SIGTERM at once; a pod still in the API after 60 s waited for its grace period.
	waitPodGone(t, ns, "quick", 60*time.Second)
}

func TestRecreatedPodNeverInheritsContainers(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, basePod("same", serverContainer("web")))
	old := waitPod(t, ns, "same", 2*time.Minute, "Running and Ready", isRunningReady)
	zero := int64(0)
	if err := s.kube.CoreV1().Pods(ns).Delete(ctxFor(t, 10*time.Second), "same", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatalf("deleting: %v", err)
	}
	waitPodGone(t, ns, "same", time.Minute)
	createPod(t, ns, basePod("same", serverContainer("web")))
	cur := waitPod(t, ns, "same", 2*time.Minute, "Running and Ready", func(p *v1.Pod) bool {
		return p.UID != old.UID && isRunningReady(p)
	})
	if cur.Status.ContainerStatuses[0].ContainerID == old.Status.ContainerStatuses[0].ContainerID {
		t.Fatalf("new pod reports the old pod's container %s", old.Status.ContainerStatuses[0].ContainerID)
	}
	if cur.Status.ContainerStatuses[0].RestartCount != 0 {
		t.Errorf("new pod's restartCount %d, want 0", cur.Status.ContainerStatuses[0].RestartCount)
	}
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		sbs, cs := runtimeObjects(t, string(old.UID))
		return len(sbs) == 0 && len(cs) == 0, nil
	})
	if err != nil {
		t.Fatalf("the old pod's sandbox or containers are still in the runtime")
	}
}

func TestMissingImageWaitsWithReason(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, basePod("noimage", v1.Container{Name: "main", Image: image("does-not-exist:1.0")}))
	p := waitPod(t, ns, "noimage", 2*time.Minute, "an image pull waiting reason", func(p *v1.Pod) bool {
		if len(p.Status.ContainerStatuses) == 0 {
			return false
		}
		w := p.Status.ContainerStatuses[0].State.Waiting
		return w != nil && (w.Reason == "ErrImagePull" || w.Reason == "ImagePullBackOff") && w.Message != ""
	})
	if p.Status.Phase != v1.PodPending {
		t.Errorf("phase %s, want Pending", p.Status.Phase)
	}
	// The kubelet records a Failed event for the pull.
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		evs, err := s.kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=noimage"})
		if err != nil {
			return false, nil
		}
		for _, e := range evs.Items {
			if e.Reason == "Failed" && strings.Contains(e.Message, "does-not-exist") {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Errorf("no Failed event naming the image")
	}
	// vk-cri keeps working: a good pod next to it runs.
	createPod(t, ns, basePod("neighbour", serverContainer("web")))
	waitPod(t, ns, "neighbour", 2*time.Minute, "Running and Ready", isRunningReady)
	if err := node("status"); err != nil {
		t.Fatalf("vk-cri is not running any more: %v", err)
	}
}
