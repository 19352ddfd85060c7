//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
)

// TestProbeAcrossVkCriRestart restarts the test's own vk-cri node while a ready pod and a pod
// whose readiness probe fails run: as with the kubelet v1.37, the ready pod stays Ready (its
// readiness flag is kept until a probe says otherwise), the other stays not ready until its
// first successful probe, and no container is killed because of the restart.
func TestProbeAcrossVkCriRestart(t *testing.T) {
	ns := newNamespace(t)
	sw := newProbeSwitches(t)
	sw.Set("up-ready", true)
	sw.Set("up-live", true)
	sw.Set("down-ready", false)
	sw.Set("down-live", true)
	mk := func(name string) *v1.Pod {
		c := probedContainer("c")
		c.ReadinessProbe = probe(sw.handler("httpGet", name+"-ready"), 1)
		c.LivenessProbe = probe(sw.handler("httpGet", name+"-live"), 3)
		return basePod(name, c)
	}
	createPod(t, ns, mk("up"))
	createPod(t, ns, mk("down"))
	up := waitPod(t, ns, "up", 2*time.Minute, "Ready", isRunningReady)
	down := waitPod(t, ns, "down", time.Minute, "running, not ready", func(p *v1.Pod) bool {
		return mainStatus(p).State.Running != nil && isStarted(mainStatus(p)) && condition(p, v1.PodReady) == v1.ConditionFalse
	})

	// The kubelet (and vk-cri) treat containers started less than 10 s before the restart as new:
	// only older ones keep their verdicts.
	startedAt := mainStatus(up).State.Running.StartedAt.Time
	if err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return time.Since(startedAt) > 12*time.Second, nil
	}); err != nil {
		t.Fatal(err)
	}
	up, _ = s.kube.CoreV1().Pods(ns).Get(ctxFor(t, 10*time.Second), "up", metav1.GetOptions{})

	// Watch "up" through the restart: its Ready condition must never turn False.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := s.kube.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", "up").String(), ResourceVersion: up.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	flipped := make(chan string, 1)
	go func() {
		for ev := range w.ResultChan() {
			if p, ok := ev.Object.(*v1.Pod); ok && ev.Type == watch.Modified && condition(p, v1.PodReady) != v1.ConditionTrue {
				select {
				case flipped <- describeStatus(p):
				default:
				}
			}
		}
	}()

	restartNode(t, "")
	// Enough probes after the restart for a liveness kill to have happened (threshold 3).
	upHits, downHits := sw.Hits("up-live"), sw.Hits("down-live")
	waitHits(t, sw, "up-live", upHits+4)
	waitHits(t, sw, "down-ready", sw.Hits("down-ready")+2)
	waitHits(t, sw, "down-live", downHits+4)
	select {
	case st := <-flipped:
		t.Fatalf("the ready pod turned not ready across the restart: %s", st)
	default:
	}
	for name, before := range map[string]*v1.Pod{"up": up, "down": down} {
		p, err := s.kube.CoreV1().Pods(ns).Get(ctxFor(t, 10*time.Second), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := mainStatus(p).ContainerID, mainStatus(before).ContainerID; got != want || mainStatus(p).RestartCount != 0 {
			t.Fatalf("pod %s: container %s restarts %d after the restart, was %s", name, got, mainStatus(p).RestartCount, want)
		}
	}
	if p, _ := s.kube.CoreV1().Pods(ns).Get(ctxFor(t, 10*time.Second), "down", metav1.GetOptions{}); condition(p, v1.PodReady) != v1.ConditionFalse {
		t.Fatalf("the not-ready pod turned ready without a successful probe: %s", describeStatus(p))
	}
	sw.Set("down-ready", true)
	waitPod(t, ns, "down", 30*time.Second, "Ready after its first success", isRunningReady)
}

// TestProbeSidecar probes a sidecar (a restartable init container): its startup probe holds the
// regular container back, its readiness decides the pod's, and a liveness failure restarts it.
func TestProbeSidecar(t *testing.T) {
	ns := newNamespace(t)
	sw := newProbeSwitches(t)
	sw.Set("side-startup", false)
	sw.Set("side-ready", true)
	sw.Set("side-live", true)
	always := v1.ContainerRestartPolicyAlways
	side := probedContainer("side")
	side.RestartPolicy = &always
	side.StartupProbe = probe(sw.handler("httpGet", "side-startup"), 60)
	side.ReadinessProbe = probe(sw.handler("httpGet", "side-ready"), 1)
	side.LivenessProbe = probe(sw.handler("httpGet", "side-live"), 2)
	grace := int64(2)
	side.LivenessProbe.TerminationGracePeriodSeconds = &grace
	pod := basePod("sc", probedContainer("main"))
	pod.Spec.InitContainers = []v1.Container{side}
	createPod(t, ns, pod)

	sideStatus := func(p *v1.Pod) v1.ContainerStatus {
		if len(p.Status.InitContainerStatuses) == 0 {
			return v1.ContainerStatus{}
		}
		return p.Status.InitContainerStatuses[0]
	}
	waitPod(t, ns, "sc", 2*time.Minute, "sidecar running", func(p *v1.Pod) bool { return sideStatus(p).State.Running != nil })
	waitHits(t, sw, "side-startup", 3)
	p := waitPod(t, ns, "sc", 5*time.Second, "main held back", func(p *v1.Pod) bool { return !isStarted(sideStatus(p)) })
	if mainStatus(p).State.Running != nil || mainStatus(p).ContainerID != "" {
		t.Fatalf("the main container started before the sidecar's startup probe succeeded: %s", describeStatus(p))
	}
	sw.Set("side-startup", true)
	waitPod(t, ns, "sc", time.Minute, "Ready", isRunningReady)

	sw.Set("side-ready", false)
	waitPod(t, ns, "sc", 30*time.Second, "not Ready (sidecar not ready)", func(p *v1.Pod) bool {
		return !sideStatus(p).Ready && condition(p, v1.PodReady) == v1.ConditionFalse && mainStatus(p).Ready
	})
	sw.Set("side-ready", true)
	waitPod(t, ns, "sc", 30*time.Second, "Ready again", isRunningReady)

	sw.Set("side-live", false)
	waitEvent(t, ns, "sc", "Killing", "Init container side failed liveness probe", 30*time.Second)
	sw.Set("side-live", true)
	p = waitPod(t, ns, "sc", time.Minute, "sidecar restarted, pod Ready", func(p *v1.Pod) bool {
		return sideStatus(p).RestartCount == 1 && sideStatus(p).Ready && isRunningReady(p)
	})
	if mainStatus(p).RestartCount != 0 {
		t.Fatalf("the main container restarted with the sidecar: %s", describeStatus(p))
	}
}
