//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
)

// probedContainer runs until killed and ignores SIGTERM, so that a kill for a failed probe
// lasts the probe's own terminationGracePeriodSeconds, not the pod's. It requests some CPU: a
// BestEffort pod's cgroup has the kubelet's 2 cpu.shares, so on a loaded machine its exec probes
// (sh, nc, head, grep started in the container) starve past their timeout, on vk-cri since it
// makes pod cgroups as on the kubelet.
func probedContainer(name string) v1.Container {
	c := busybox(name, "trap '' TERM; while true; do sleep 1; done")
	c.Resources.Requests = v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")}
	return c
}

// probe runs every second. Its timeout is generous: an exec probe (runc exec, then nc) on a
// loaded 2-core machine can take seconds, and a slow success must not count as a failure.
func probe(h v1.ProbeHandler, failureThreshold int32) *v1.Probe {
	return &v1.Probe{ProbeHandler: h, PeriodSeconds: 1, TimeoutSeconds: 5, SuccessThreshold: 1, FailureThreshold: failureThreshold}
}

// probePod is a pod of the e2e node labelled app=<app> whose container has the three probes,
// each aimed at its own switch. The pod's grace period is long (60 s) and the liveness and
// startup probes' own is 2 s: a kill that ends quickly shows the probe's grace was used.
func probePod(sw *probeSwitches, kind, name, app string, startupFailures int32) *v1.Pod {
	c := probedContainer("c")
	c.Env = []v1.EnvVar{{Name: "PROBE_HOST", Value: sw.ip}}
	probeGrace := int64(2)
	c.StartupProbe = probe(sw.handler(kind, name+"-startup"), startupFailures)
	c.StartupProbe.TerminationGracePeriodSeconds = &probeGrace
	c.ReadinessProbe = probe(sw.handler(kind, name+"-ready"), 1)
	c.LivenessProbe = probe(sw.handler(kind, name+"-live"), 3)
	c.LivenessProbe.TerminationGracePeriodSeconds = &probeGrace
	pod := basePod(name, c)
	pod.Labels = map[string]string{"app": app}
	grace := int64(60)
	pod.Spec.TerminationGracePeriodSeconds = &grace
	// gRPC probes always target the pod IP: the switches listen on the node's.
	pod.Spec.HostNetwork = kind == "grpc"
	return pod
}

func createService(t *testing.T, ns, app string) {
	t.Helper()
	svc := &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: app},
		Spec: v1.ServiceSpec{
			Selector: map[string]string{"app": app},
			Ports:    []v1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: v1.ProtocolTCP}},
		},
	}
	if _, err := s.kube.CoreV1().Services(ns).Create(ctxFor(t, 30*time.Second), svc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating service %s: %v", app, err)
	}
}

// waitEndpoint waits until the service's EndpointSlices list the pod with the given readiness.
func waitEndpoint(t *testing.T, ns, svc, pod string, ready bool) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 45*time.Second, true, func(ctx context.Context) (bool, error) {
		slices, err := s.kube.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc})
		if err != nil {
			return false, nil
		}
		last = ""
		for _, sl := range slices.Items {
			for _, ep := range sl.Endpoints {
				if ep.TargetRef == nil || ep.TargetRef.Name != pod {
					continue
				}
				got := ep.Conditions.Ready != nil && *ep.Conditions.Ready
				last = fmt.Sprintf("%v ready=%v", ep.Addresses, got)
				if got == ready {
					return true, nil
				}
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("EndpointSlice of service %s: pod %s never had ready=%v (last: %q)", svc, pod, ready, last)
	}
}

func waitHits(t *testing.T, sw *probeSwitches, name string, n int) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 45*time.Second, true, func(context.Context) (bool, error) {
		return sw.Hits(name) >= n, nil
	})
	if err != nil {
		t.Fatalf("switch %s answered %d probes, want at least %d", name, sw.Hits(name), n)
	}
}

func condition(p *v1.Pod, typ v1.PodConditionType) v1.ConditionStatus {
	for _, c := range p.Status.Conditions {
		if c.Type == typ {
			return c.Status
		}
	}
	return ""
}

func mainStatus(p *v1.Pod) v1.ContainerStatus {
	if len(p.Status.ContainerStatuses) == 0 {
		return v1.ContainerStatus{}
	}
	return p.Status.ContainerStatuses[0]
}

func isStarted(cs v1.ContainerStatus) bool { return cs.Started != nil && *cs.Started }

// TestProbeHandlersAndKinds runs each handler (exec, httpGet, tcpSocket, grpc) as startup,
// readiness and liveness probe of one container, driving each probe's target healthy and
// unhealthy: the startup gate, started and ready flags, the Ready and ContainersReady
// conditions, the EndpointSlice's readiness, restarts for liveness and startup failures, and
// the kubelet's Unhealthy and Killing events.
func TestProbeHandlersAndKinds(t *testing.T) {
	for _, kind := range []string{"exec", "httpGet", "tcpSocket", "grpc"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			testProbeKind(t, kind)
		})
	}
}

func testProbeKind(t *testing.T, kind string) {
	ns := newNamespace(t)
	sw := newProbeSwitches(t)
	name := strings.ToLower(kind)
	app := "probe-" + name
	createService(t, ns, app)
	sw.Set(name+"-startup", false)
	sw.Set(name+"-ready", false)
	sw.Set(name+"-live", true)
	createPod(t, ns, probePod(sw, kind, name, app, 60))

	// Startup fails: the container runs but is neither started nor ready, and the other probes wait.
	// A TCP switch that is off refuses connections: it counts none.
	countsFailures := kind != "tcpSocket"
	waitPod(t, ns, name, 2*time.Minute, "running", func(p *v1.Pod) bool { return mainStatus(p).State.Running != nil })
	if countsFailures {
		waitHits(t, sw, name+"-startup", 2)
	}
	waitEvent(t, ns, name, "Unhealthy", "Startup probe failed: ", 30*time.Second)
	p := waitPod(t, ns, name, 5*time.Second, "not started", func(p *v1.Pod) bool { return !isStarted(mainStatus(p)) && !mainStatus(p).Ready })
	if n := sw.Hits(name+"-ready") + sw.Hits(name+"-live"); n != 0 {
		t.Fatalf("readiness/liveness probed %d times before the startup probe succeeded", n)
	}
	if condition(p, v1.PodReady) != v1.ConditionFalse {
		t.Fatalf("pod Ready before start: %s", describeStatus(p))
	}

	// Startup succeeds: started, readiness probed (failing) and liveness probed.
	sw.Set(name+"-startup", true)
	waitPod(t, ns, name, 30*time.Second, "started", func(p *v1.Pod) bool { return isStarted(mainStatus(p)) })
	if countsFailures {
		waitHits(t, sw, name+"-ready", 1)
	}
	waitHits(t, sw, name+"-live", 1)
	waitEvent(t, ns, name, "Unhealthy", "Readiness probe failed: ", 30*time.Second)
	waitEndpoint(t, ns, app, name, false)
	p = waitPod(t, ns, name, 5*time.Second, "not ready", func(p *v1.Pod) bool { return condition(p, v1.PodReady) == v1.ConditionFalse })
	if condition(p, v1.ContainersReady) != v1.ConditionFalse {
		t.Fatalf("ContainersReady while readiness fails: %s", describeStatus(p))
	}

	// Readiness flips: Ready, ContainersReady and the endpoint follow, nothing restarts.
	sw.Set(name+"-ready", true)
	waitPod(t, ns, name, 30*time.Second, "Ready", func(p *v1.Pod) bool {
		return mainStatus(p).Ready && condition(p, v1.PodReady) == v1.ConditionTrue && condition(p, v1.ContainersReady) == v1.ConditionTrue
	})
	waitEndpoint(t, ns, app, name, true)
	sw.Set(name+"-ready", false)
	waitPod(t, ns, name, 30*time.Second, "not Ready again", func(p *v1.Pod) bool {
		return !mainStatus(p).Ready && condition(p, v1.PodReady) == v1.ConditionFalse && condition(p, v1.ContainersReady) == v1.ConditionFalse
	})
	waitEndpoint(t, ns, app, name, false)
	sw.Set(name+"-ready", true)
	p = waitPod(t, ns, name, 30*time.Second, "Ready again", func(p *v1.Pod) bool { return condition(p, v1.PodReady) == v1.ConditionTrue })
	if rc := mainStatus(p).RestartCount; rc != 0 {
		t.Fatalf("readiness failures restarted the container %d times", rc)
	}
	firstID := mainStatus(p).ContainerID

	// Liveness fails three times in a row: the container is killed (within the probe's 2 s grace
	// although it ignores SIGTERM and the pod's grace is 60 s) and restarted; the new instance
	// goes through startup and readiness again.
	sw.Set(name+"-live", false)
	waitEvent(t, ns, name, "Unhealthy", "Liveness probe failed: ", 30*time.Second)
	waitEvent(t, ns, name, "Killing", "Container c failed liveness probe, will be restarted", 30*time.Second)
	// The kill is decided: the next instance finds its liveness target healthy.
	sw.Set(name+"-live", true)
	waitPod(t, ns, name, 30*time.Second, "restarted once", func(p *v1.Pod) bool { return mainStatus(p).RestartCount == 1 })
	p = waitPod(t, ns, name, 45*time.Second, "Ready after the restart", func(p *v1.Pod) bool {
		cs := mainStatus(p)
		return cs.RestartCount == 1 && cs.State.Running != nil && cs.Ready && condition(p, v1.PodReady) == v1.ConditionTrue
	})
	cs := mainStatus(p)
	if cs.ContainerID == firstID {
		t.Fatalf("same container ID after the liveness restart")
	}
	if term := cs.LastTerminationState.Terminated; term == nil || term.ExitCode != 137 {
		t.Fatalf("last state after the liveness kill: %+v, want terminated with 137 (SIGKILL after the probe's grace)", cs.LastTerminationState)
	}
	waitEndpoint(t, ns, app, name, true)

	// A startup probe that never succeeds gets its container killed and restarted.
	sw.Set(name+"-never-startup", false)
	sw.Set(name+"-never-ready", true)
	sw.Set(name+"-never-live", true)
	createPod(t, ns, probePod(sw, kind, name+"-never", app, 2))
	waitEvent(t, ns, name+"-never", "Killing", "Container c failed startup probe, will be restarted", 30*time.Second)
	p = waitPod(t, ns, name+"-never", time.Minute, "restarted for its startup probe", func(p *v1.Pod) bool { return mainStatus(p).RestartCount >= 1 })
	if isStarted(mainStatus(p)) || condition(p, v1.PodReady) == v1.ConditionTrue {
		t.Fatalf("a container whose startup probe never succeeded is started or ready: %s", describeStatus(p))
	}
	if n := sw.Hits(name+"-never-ready") + sw.Hits(name+"-never-live"); n != 0 {
		t.Fatalf("readiness/liveness probed %d times for a container that never started", n)
	}
	if kind == "httpGet" {
		sw.mu.Lock()
		agent, header := sw.agents[name+"-ready"], sw.header[name+"-ready"]
		sw.mu.Unlock()
		if agent != "kube-probe/1.37" || header != name+"-ready" {
			t.Fatalf("httpGet probe sent User-Agent %q and X-Probe %q, want kube-probe/1.37 and %s-ready", agent, header, name)
		}
	}
}
