//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
)

// podWatch records every version of one pod seen through a watch, until the pod is deleted
// or the test ends, so that a test can look at states that passed (a final status written just
// before the pod left the API, the moment a container first showed running).
type podWatch struct {
	mu      sync.Mutex
	seen    []seenPod
	gone    bool
	goneAt  time.Time
	changed chan struct{}
}

type seenPod struct {
	at  time.Time
	pod *v1.Pod
}

func watchPod(t *testing.T, ns, name string) *podWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w, err := s.kube.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
	if err != nil {
		t.Fatalf("watching pod %s: %v", name, err)
	}
	pw := &podWatch{changed: make(chan struct{}, 1)}
	go func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*v1.Pod)
			if !ok {
				continue
			}
			pw.mu.Lock()
			if ev.Type == watch.Deleted {
				pw.gone, pw.goneAt = true, time.Now()
			} else {
				pw.seen = append(pw.seen, seenPod{at: time.Now(), pod: p})
			}
			pw.mu.Unlock()
			select {
			case pw.changed <- struct{}{}:
			default:
			}
		}
	}()
	return pw
}

func (w *podWatch) snapshot() []seenPod {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]seenPod(nil), w.seen...)
}

func (w *podWatch) last() *v1.Pod {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.seen) == 0 {
		return nil
	}
	return w.seen[len(w.seen)-1].pod
}

// waitFor waits until a version of the pod the watch delivered satisfies cond.
func (w *podWatch) waitFor(t *testing.T, timeout time.Duration, what string, cond func(*v1.Pod) bool) *v1.Pod {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		for _, sp := range w.snapshot() {
			if cond(sp.pod) {
				return sp.pod
			}
		}
		select {
		case <-w.changed:
		case <-deadline.C:
			t.Fatalf("waiting for %s: not seen within %v; last status: %s", what, timeout, describeStatus(w.last()))
		}
	}
}

// waitGone waits until the pod was deleted from the API and returns when that was seen.
func (w *podWatch) waitGone(t *testing.T, timeout time.Duration) time.Time {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		w.mu.Lock()
		gone, at := w.gone, w.goneAt
		w.mu.Unlock()
		if gone {
			return at
		}
		select {
		case <-w.changed:
		case <-deadline.C:
			t.Fatalf("pod still in the API after %v; last status: %s", timeout, describeStatus(w.last()))
		}
	}
}

func containerStatus(p *v1.Pod, name string) (v1.ContainerStatus, bool) {
	if p == nil {
		return v1.ContainerStatus{}, false
	}
	for _, list := range [][]v1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
		for _, c := range list {
			if c.Name == name {
				return c, true
			}
		}
	}
	return v1.ContainerStatus{}, false
}

// A shell that stops at once on SIGTERM, as PID 1.
const trapAndSleep = `trap 'exit 0' TERM; sleep 3600 & wait`

// hitRecorder is an HTTP server on the node's address that pods can reach: hooks and scripts
// call it, and the test reads which paths were called, in order, and when.
type hitRecorder struct {
	url  string
	mu   sync.Mutex
	hits []hit
}

type hit struct {
	path string
	at   time.Time
}

func newHitRecorder(t *testing.T) *hitRecorder {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(s.env["NODE_IP"], "0"))
	if err != nil {
		t.Fatalf("listening on the node address: %v", err)
	}
	h := &hitRecorder{url: "http://" + ln.Addr().String()}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.hits = append(h.hits, hit{path: r.URL.Path, at: time.Now()})
		h.mu.Unlock()
		fmt.Fprintln(w, "ok")
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return h
}

func (h *hitRecorder) port() int {
	_, p, _ := net.SplitHostPort(strings.TrimPrefix(h.url, "http://"))
	n, _ := strconv.Atoi(p)
	return n
}

func (h *hitRecorder) paths() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, x := range h.hits {
		out = append(out, x.path)
	}
	return out
}

func (h *hitRecorder) waitFor(t *testing.T, path string, timeout time.Duration) time.Time {
	t.Helper()
	var at time.Time
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, x := range h.hits {
			if x.path == path {
				at = x.at
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("nothing called %s within %v (calls: %v)", path, timeout, h.paths())
	}
	return at
}

func deletePod(t *testing.T, ns, name string, grace *int64) time.Time {
	t.Helper()
	start := time.Now()
	err := s.kube.CoreV1().Pods(ns).Delete(ctxFor(t, 30*time.Second), name, metav1.DeleteOptions{GracePeriodSeconds: grace})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatalf("deleting pod %s: %v", name, err)
	}
	return start
}

func TestLifecycleInitContainersRunInOrder(t *testing.T) {
	ns := newNamespace(t)
	pod := basePod("init-order", busybox("main", trapAndSleep))
	pod.Spec.InitContainers = []v1.Container{busybox("first", "sleep 1"), busybox("second", "sleep 1")}
	createPod(t, ns, pod)
	p := waitPod(t, ns, "init-order", 90*time.Second, "Running", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodRunning })
	first, _ := containerStatus(p, "first")
	second, _ := containerStatus(p, "second")
	main, _ := containerStatus(p, "main")
	if first.State.Terminated == nil || second.State.Terminated == nil || main.State.Running == nil {
		t.Fatalf("states: %s", describeStatus(p))
	}
	if second.State.Terminated.StartedAt.Before(&first.State.Terminated.FinishedAt) {
		t.Errorf("second init container started (%v) before the first finished (%v)", second.State.Terminated.StartedAt, first.State.Terminated.FinishedAt)
	}
	if main.State.Running.StartedAt.Before(&second.State.Terminated.FinishedAt) {
		t.Errorf("main container started (%v) before the init containers finished (%v)", main.State.Running.StartedAt, second.State.Terminated.FinishedAt)
	}
	if first.State.Terminated.Reason != "Completed" || !first.Ready {
		t.Errorf("first init container: %+v", first)
	}
}

func TestLifecycleInitFailureNeverFailsPod(t *testing.T) {
	ns := newNamespace(t)
	pod := basePod("init-fails", busybox("main", trapAndSleep))
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	pod.Spec.InitContainers = []v1.Container{busybox("setup", "exit 3")}
	createPod(t, ns, pod)
	p := waitPod(t, ns, "init-fails", 90*time.Second, "Failed", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodFailed })
	setup, _ := containerStatus(p, "setup")
	main, _ := containerStatus(p, "main")
	if setup.State.Terminated == nil || setup.State.Terminated.ExitCode != 3 || setup.State.Terminated.Reason != "Error" {
		t.Errorf("init container: %+v", setup.State)
	}
	// kubectl shows Init:Error from this; the main container never ran.
	if main.State.Waiting == nil || main.State.Waiting.Reason != "PodInitializing" || main.ContainerID != "" {
		t.Errorf("main container: %+v", main)
	}
}

func TestLifecycleInitFailureRetriedWithBackoff(t *testing.T) {
	ns := newNamespace(t)
	pod := basePod("init-retry", busybox("main", trapAndSleep))
	pod.Spec.RestartPolicy = v1.RestartPolicyOnFailure
	pod.Spec.InitContainers = []v1.Container{busybox("setup", "exit 1")}
	w := watchPod(t, ns, "init-retry")
	createPod(t, ns, pod)
	// kubectl's Init:CrashLoopBackOff: the init container waits in CrashLoopBackOff. As with the
	// kubelet, that shows only from a back-off's end to the restart: every version of the pod the
	// API holds is looked at, not one every so often.
	p := w.waitFor(t, 90*time.Second, "init container in CrashLoopBackOff", func(p *v1.Pod) bool {
		c, ok := containerStatus(p, "setup")
		return ok && c.State.Waiting != nil && c.State.Waiting.Reason == "CrashLoopBackOff"
	})
	setup, _ := containerStatus(p, "setup")
	if setup.RestartCount < 1 || setup.LastTerminationState.Terminated == nil || setup.LastTerminationState.Terminated.ExitCode != 1 {
		t.Errorf("init container: restarts %d last %+v", setup.RestartCount, setup.LastTerminationState)
	}
	if !strings.Contains(setup.State.Waiting.Message, "restarting failed container=setup pod=init-retry_"+ns) {
		t.Errorf("waiting message %q", setup.State.Waiting.Message)
	}
	if p.Status.Phase != v1.PodPending {
		t.Errorf("phase %s, want Pending", p.Status.Phase)
	}
}

func TestLifecycleSidecarStartAndShutdownOrder(t *testing.T) {
	ns := newNamespace(t)
	rec := newRecord(t)
	always := v1.ContainerRestartPolicyAlways
	// The sidecar records its SIGTERM; the main container takes 2 s to stop after its own.
	sidecar := rec.mount(busybox("proxy", `trap '`+recordShell("sidecar-term")+`; exit 0' TERM; sleep 3600 & wait`))
	sidecar.RestartPolicy = &always
	main := rec.mount(busybox("main", `trap '`+recordShell("main-term")+`; sleep 2; exit 0' TERM; sleep 3600 & wait`))
	pod := rec.addTo(basePod("sidecar", main))
	grace := int64(20)
	pod.Spec.TerminationGracePeriodSeconds = &grace
	pod.Spec.InitContainers = []v1.Container{sidecar}
	createPod(t, ns, pod)
	w := watchPod(t, ns, "sidecar")
	p := waitPod(t, ns, "sidecar", 90*time.Second, "Running and Ready", isRunningReady)
	sc, _ := containerStatus(p, "proxy")
	mc, _ := containerStatus(p, "main")
	if sc.State.Running == nil || mc.State.Running == nil || mc.State.Running.StartedAt.Before(&sc.State.Running.StartedAt) {
		t.Fatalf("the sidecar must run before the main container starts: %s", describeStatus(p))
	}

	deletePod(t, ns, "sidecar", nil)
	w.waitGone(t, 60*time.Second)
	got := rec.read(t)
	mainTerm, ok1 := got["main-term"]
	sideTerm, ok2 := got["sidecar-term"]
	if !ok1 || !ok2 {
		t.Fatalf("both containers must get SIGTERM: record %v", got)
	}
	if d := sideTerm - mainTerm; d < 1.5 {
		t.Errorf("the sidecar got SIGTERM %.2fs after the main container; want it after the main container stopped (2 s)", d)
	}
}

// restartTimes extracts, from every status seen, each instance of a container: when it started
// and when it finished, keyed by restart count.
func restartTimes(seen []seenPod, name string) (started, finished map[int32]time.Time) {
	started, finished = map[int32]time.Time{}, map[int32]time.Time{}
	for _, sp := range seen {
		c, ok := containerStatus(sp.pod, name)
		if !ok {
			continue
		}
		if r := c.State.Running; r != nil {
			started[c.RestartCount] = r.StartedAt.Time
		}
		if tm := c.State.Terminated; tm != nil {
			started[c.RestartCount] = tm.StartedAt.Time
			finished[c.RestartCount] = tm.FinishedAt.Time
		}
	}
	return started, finished
}

func TestLifecycleCrashLoopBackOffIntervals(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, basePod("crashloop", busybox("c", "sleep 1; exit 1")))
	w := watchPod(t, ns, "crashloop")
	p := waitPod(t, ns, "crashloop", 3*time.Minute, "4 restarts", func(p *v1.Pod) bool {
		c, ok := containerStatus(p, "c")
		return ok && c.RestartCount >= 4 && c.State.Running != nil
	})
	started, finished := restartTimes(w.snapshot(), "c")
	// The first restart is immediate, then the kubelet's back-off: 10 s, 20 s, 40 s. Times in the
	// status have a 1 s resolution; the kubelet's own resync adds up to half the back-off period.
	want := []struct{ min, max time.Duration }{{0, 4 * time.Second}, {9 * time.Second, 17 * time.Second}, {19 * time.Second, 32 * time.Second}, {39 * time.Second, 62 * time.Second}}
	for i, wnt := range want {
		f, okF := finished[int32(i)]
		st, okS := started[int32(i+1)]
		if !okF || !okS {
			t.Errorf("restart %d: finish seen %v, next start seen %v", i+1, okF, okS)
			continue
		}
		gap := st.Sub(f)
		t.Logf("restart %d after %v", i+1, gap)
		if gap < wnt.min || gap > wnt.max {
			t.Errorf("restart %d came %v after the exit, want %v to %v", i+1, gap, wnt.min, wnt.max)
		}
	}
	c, _ := containerStatus(p, "c")
	if c.RestartCount != 4 || c.LastTerminationState.Terminated == nil || c.LastTerminationState.Terminated.ExitCode != 1 {
		t.Errorf("restartCount %d lastState %+v", c.RestartCount, c.LastTerminationState)
	}
	// The waiting state between restarts is the kubelet's.
	var waited string
	for _, sp := range w.snapshot() {
		if c, ok := containerStatus(sp.pod, "c"); ok && c.State.Waiting != nil && c.State.Waiting.Reason == "CrashLoopBackOff" {
			waited = c.State.Waiting.Message
		}
	}
	if !strings.HasPrefix(waited, "back-off ") || !strings.Contains(waited, "restarting failed container=c pod=crashloop_"+ns) {
		t.Errorf("CrashLoopBackOff message %q", waited)
	}
	waitEvent(t, ns, "crashloop", "BackOff", "", 10*time.Second)
}

func TestHookPostStartExecHoldsRunning(t *testing.T) {
	ns := newNamespace(t)
	hits := newHitRecorder(t)
	c := busybox("c", trapAndSleep)
	c.Lifecycle = &v1.Lifecycle{PostStart: &v1.LifecycleHandler{Exec: &v1.ExecAction{
		Command: []string{"sh", "-c", fmt.Sprintf("sleep 3; wget -q -O- %s/poststart-exec", hits.url)},
	}}}
	createPod(t, ns, basePod("poststart", c))
	w := watchPod(t, ns, "poststart")
	waitPod(t, ns, "poststart", 90*time.Second, "Running", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodRunning })
	hookDone := hits.waitFor(t, "/poststart-exec", 10*time.Second)
	for _, sp := range w.snapshot() {
		if cs, ok := containerStatus(sp.pod, "c"); ok && cs.State.Running != nil {
			if sp.at.Before(hookDone) {
				t.Errorf("container reported running at %v, before its postStart hook returned at %v", sp.at, hookDone)
			}
			if d := sp.at.Sub(cs.State.Running.StartedAt.Time); d < 2*time.Second {
				t.Errorf("running reported %v after the start; the hook takes 3 s", d)
			}
			break
		}
	}
}

func TestHookPostStartHTTPGet(t *testing.T) {
	ns := newNamespace(t)
	hits := newHitRecorder(t)
	c := busybox("c", trapAndSleep)
	c.Lifecycle = &v1.Lifecycle{PostStart: &v1.LifecycleHandler{HTTPGet: &v1.HTTPGetAction{
		Host: s.env["NODE_IP"], Port: intstr.FromInt(hits.port()), Path: "/poststart-http",
	}}}
	createPod(t, ns, basePod("poststart-http", c))
	waitPod(t, ns, "poststart-http", 90*time.Second, "Running", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodRunning })
	hits.waitFor(t, "/poststart-http", 5*time.Second)
}

func TestHookPostStartFailureKillsContainer(t *testing.T) {
	ns := newNamespace(t)
	c := busybox("c", trapAndSleep)
	c.Lifecycle = &v1.Lifecycle{PostStart: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"sh", "-c", "exit 1"}}}}
	createPod(t, ns, basePod("poststart-fails", c))
	p := waitPod(t, ns, "poststart-fails", 90*time.Second, "PostStartHookError", func(p *v1.Pod) bool {
		cs, ok := containerStatus(p, "c")
		return ok && cs.State.Waiting != nil && cs.State.Waiting.Reason == "PostStartHookError"
	})
	cs, _ := containerStatus(p, "c")
	if !strings.Contains(cs.State.Waiting.Message, "Exec lifecycle hook ([sh -c exit 1]) for Container \"c\"") {
		t.Errorf("waiting message %q", cs.State.Waiting.Message)
	}
	if cs.LastTerminationState.Terminated == nil {
		t.Errorf("the killed container has no last state: %+v", cs)
	}
	ev := waitEvent(t, ns, "poststart-fails", "FailedPostStartHook", "", 10*time.Second)
	if ev.Type != v1.EventTypeWarning || ev.Message != "PostStartHook failed" {
		t.Errorf("event %s %q", ev.Type, ev.Message)
	}
	kill := waitEvent(t, ns, "poststart-fails", "Killing", "", 10*time.Second)
	if kill.Message != "FailedPostStartHook" {
		t.Errorf("Killing event message %q", kill.Message)
	}
}

func TestHookPreStopRunsBeforeSIGTERM(t *testing.T) {
	for _, kind := range []string{"exec", "httpGet"} {
		t.Run(kind, func(t *testing.T) {
			ns := newNamespace(t)
			hits := newHitRecorder(t)
			rec := newRecord(t)
			c := rec.mount(busybox("c", `trap '`+recordShell("term")+`; exit 0' TERM; sleep 3600 & wait`))
			h := &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"sh", "-c", recordShell("prestop") + "; sleep 2"}}}
			if kind == "httpGet" {
				h = &v1.LifecycleHandler{HTTPGet: &v1.HTTPGetAction{Host: s.env["NODE_IP"], Port: intstr.FromInt(hits.port()), Path: "/prestop"}}
			}
			c.Lifecycle = &v1.Lifecycle{PreStop: h}
			pod := rec.addTo(basePod("prestop", c))
			grace := int64(15)
			pod.Spec.TerminationGracePeriodSeconds = &grace
			createPod(t, ns, pod)
			waitPod(t, ns, "prestop", 90*time.Second, "Running and Ready", isRunningReady)
			w := watchPod(t, ns, "prestop")
			deletePod(t, ns, "prestop", nil)
			w.waitGone(t, 30*time.Second)
			if cs, ok := containerStatus(w.last(), "c"); !ok || cs.State.Terminated == nil || cs.State.Terminated.ExitCode != 0 {
				t.Errorf("final state: %s", describeStatus(w.last()))
			}
			record := rec.read(t)
			term, ok := record["term"]
			if !ok {
				t.Fatalf("the container never got SIGTERM: record %v", record)
			}
			if kind == "httpGet" {
				pre := hits.waitFor(t, "/prestop", time.Second)
				if termAt := uptimeToWall(t, term); !pre.Before(termAt) {
					t.Errorf("SIGTERM (%v) before the preStop hook's request (%v)", termAt, pre)
				}
				return
			}
			pre, ok := record["prestop"]
			if !ok {
				t.Fatalf("the preStop hook never ran: record %v", record)
			}
			if term-pre < 1.5 {
				t.Errorf("SIGTERM %.2fs after the hook started; the hook takes 2 s", term-pre)
			}
		})
	}
}

// uptimeToWall turns a reading of the kernel's uptime clock into wall-clock time.
func uptimeToWall(t *testing.T, uptime float64) time.Time {
	t.Helper()
	b, err := os.ReadFile("/proc/uptime")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	var nowUptime float64
	if _, err := fmt.Sscanf(string(b), "%f", &nowUptime); err != nil {
		t.Fatalf("/proc/uptime %q: %v", b, err)
	}
	return now.Add(-time.Duration((nowUptime - uptime) * float64(time.Second)))
}

// record is a host directory that containers append "<what> <uptime seconds>" lines to, so a
// test learns what happened inside them, and when on the kernel's uptime clock (the same inside
// and outside containers), even after the pod is gone. No network: busybox-static's wget now and
// then hangs or dies in these containers, and a lost report is not what the tests are about.
type record struct{ dir string }

func newRecord(t *testing.T) record { return record{dir: t.TempDir()} }

// recordShell is a shell command that records what happened now.
func recordShell(what string) string {
	return `echo "` + what + ` $(cut -d" " -f1 /proc/uptime)" >>/record/log`
}

func (r record) mount(c v1.Container) v1.Container {
	c.VolumeMounts = append(c.VolumeMounts, v1.VolumeMount{Name: "record", MountPath: "/record"})
	return c
}

func (r record) addTo(p *v1.Pod) *v1.Pod {
	p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: "record", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: r.dir}}})
	return p
}

// read returns when each thing recorded happened (the last time, for repeats).
func (r record) read(t *testing.T) map[string]float64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.dir, "log"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatalf("reading the containers' record: %v", err)
	}
	out := map[string]float64{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		var what string
		var at float64
		if _, err := fmt.Sscanf(line, "%s %f", &what, &at); err != nil {
			t.Fatalf("record line %q: %v", line, err)
		}
		out[what] = at
	}
	return out
}

func TestHookPreStopLongerThanGraceIsCut(t *testing.T) {
	ns := newNamespace(t)
	c := busybox("c", `trap '' TERM; while true; do sleep 1; done`)
	c.Lifecycle = &v1.Lifecycle{PreStop: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"sleep", "60"}}}}
	pod := basePod("prestop-long", c)
	grace := int64(3)
	pod.Spec.TerminationGracePeriodSeconds = &grace
	createPod(t, ns, pod)
	waitPod(t, ns, "prestop-long", 90*time.Second, "Running and Ready", isRunningReady)
	w := watchPod(t, ns, "prestop-long")
	start := deletePod(t, ns, "prestop-long", nil)
	gone := w.waitGone(t, 40*time.Second)
	// 3 s of hook, then the 2 s minimum between SIGTERM and SIGKILL.
	if d := gone.Sub(start); d < 4500*time.Millisecond || d > 12*time.Second {
		t.Errorf("deletion took %v, want about 5 s", d)
	}
	if cs, ok := containerStatus(w.last(), "c"); !ok || cs.State.Terminated == nil || cs.State.Terminated.ExitCode != 137 {
		t.Errorf("final state: %s", describeStatus(w.last()))
	}
}

func TestTerminationGracefulSIGTERMAndKillAfterGrace(t *testing.T) {
	ns := newNamespace(t)
	grace := int64(4)
	clean := basePod("clean", busybox("c", trapAndSleep))
	clean.Spec.TerminationGracePeriodSeconds = &grace
	stubborn := basePod("stubborn", v1.Container{Name: "c", Image: image("vktest:latest"), Args: []string{"sleep", "--ignore-term", "3600"}})
	stubborn.Spec.TerminationGracePeriodSeconds = &grace
	createPod(t, ns, clean)
	createPod(t, ns, stubborn)
	waitPod(t, ns, "clean", 90*time.Second, "Running and Ready", isRunningReady)
	waitPod(t, ns, "stubborn", 90*time.Second, "Running and Ready", isRunningReady)
	wc, ws := watchPod(t, ns, "clean"), watchPod(t, ns, "stubborn")
	startC := deletePod(t, ns, "clean", nil)
	startS := deletePod(t, ns, "stubborn", nil)
	goneC, goneS := wc.waitGone(t, 30*time.Second), ws.waitGone(t, 30*time.Second)
	if d := goneC.Sub(startC); d > 3*time.Second {
		t.Errorf("a container exiting on SIGTERM took %v to go", d)
	}
	if cs, _ := containerStatus(wc.last(), "c"); cs.State.Terminated == nil || cs.State.Terminated.ExitCode != 0 || cs.State.Terminated.Reason != "Completed" {
		t.Errorf("clean exit: %s", describeStatus(wc.last()))
	}
	if d := goneS.Sub(startS); d < 4*time.Second || d > 10*time.Second {
		t.Errorf("a container ignoring SIGTERM went after %v, want the 4 s grace period", d)
	}
	if cs, _ := containerStatus(ws.last(), "c"); cs.State.Terminated == nil || cs.State.Terminated.ExitCode != 137 {
		t.Errorf("killed: %s", describeStatus(ws.last()))
	}
}

func TestLifecycleActiveDeadlineFailsPod(t *testing.T) {
	ns := newNamespace(t)
	deadline := int64(4)
	pod := basePod("deadline", busybox("c", trapAndSleep))
	pod.Spec.ActiveDeadlineSeconds = &deadline
	createPod(t, ns, pod)
	p := waitPod(t, ns, "deadline", 60*time.Second, "Failed", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodFailed })
	checkDeadlineExceeded(t, ns, p)
	if d := p.Status.Conditions; len(d) == 0 {
		t.Errorf("no conditions")
	}
}

func TestLifecycleActiveDeadlineSetByUpdate(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, basePod("deadline-update", busybox("c", trapAndSleep)))
	p := waitPod(t, ns, "deadline-update", 60*time.Second, "Running and Ready", isRunningReady)
	// A long deadline first, then lowered: the lowered one counts.
	for _, secs := range []int{3600, 8} {
		patch := fmt.Sprintf(`{"spec":{"activeDeadlineSeconds":%d}}`, secs)
		if _, err := s.kube.CoreV1().Pods(ns).Patch(ctxFor(t, 10*time.Second), "deadline-update", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatalf("patching activeDeadlineSeconds: %v", err)
		}
	}
	p = waitPod(t, ns, "deadline-update", 60*time.Second, "Failed", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodFailed })
	checkDeadlineExceeded(t, ns, p)
	if since := time.Since(p.Status.StartTime.Time); since > 30*time.Second {
		t.Errorf("failed %v after the start, want about 8 s", since)
	}
}

func checkDeadlineExceeded(t *testing.T, ns string, p *v1.Pod) {
	t.Helper()
	if p.Status.Reason != "DeadlineExceeded" || p.Status.Message != "Pod was active on the node longer than the specified deadline" {
		t.Errorf("reason %q message %q", p.Status.Reason, p.Status.Message)
	}
	if cs, _ := containerStatus(p, "c"); cs.State.Terminated == nil {
		t.Errorf("container not killed: %s", describeStatus(p))
	}
	waitEvent(t, ns, p.Name, "DeadlineExceeded", "", 10*time.Second)
	_, cs := runtimeObjects(t, string(p.UID))
	for _, c := range cs {
		if c.State.String() == "CONTAINER_RUNNING" {
			t.Errorf("container %s still running in the runtime", c.Metadata.Name)
		}
	}
}

func TestTerminationMessageFromFileAndLogs(t *testing.T) {
	ns := newNamespace(t)
	file := busybox("file", `printf 'bye from the file' > /dev/termination-log; exit 3`)
	custom := busybox("custom", `printf 'custom words' > /tmp/last-words`)
	custom.TerminationMessagePath = "/tmp/last-words"
	var lines []string
	for i := 1; i <= 100; i++ {
		lines = append(lines, fmt.Sprintf("echo line-%d", i))
	}
	fromLogs := busybox("logs", strings.Join(lines, "; ")+"; exit 1")
	fromLogs.TerminationMessagePolicy = v1.TerminationMessageFallbackToLogsOnError
	succeeds := busybox("ok", "echo fine")
	succeeds.TerminationMessagePolicy = v1.TerminationMessageFallbackToLogsOnError
	pod := basePod("messages", file, custom, fromLogs, succeeds)
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	createPod(t, ns, pod)
	p := waitPod(t, ns, "messages", 90*time.Second, "Failed", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodFailed })
	msg := func(name string) string {
		cs, _ := containerStatus(p, name)
		if cs.State.Terminated == nil {
			t.Fatalf("%s not terminated: %s", name, describeStatus(p))
		}
		return cs.State.Terminated.Message
	}
	if m := msg("file"); m != "bye from the file" {
		t.Errorf("default path message %q", m)
	}
	if m := msg("custom"); m != "custom words" {
		t.Errorf("custom path message %q", m)
	}
	m := msg("logs")
	if !strings.HasPrefix(m, "line-21\n") || !strings.HasSuffix(m, "line-100\n") {
		t.Errorf("fallback message should be the last 80 log lines, got %q", m)
	}
	if m := msg("ok"); m != "" {
		t.Errorf("a succeeding container with FallbackToLogsOnError got message %q", m)
	}
}

func TestLifecycleErrImagePullThenImagePullBackOff(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, basePod("pull", v1.Container{Name: "c", Image: image("does-not-exist:1.0")}))
	w := watchPod(t, ns, "pull")
	w.waitFor(t, 2*time.Minute, "ImagePullBackOff", func(p *v1.Pod) bool {
		cs, ok := containerStatus(p, "c")
		return ok && cs.State.Waiting != nil && cs.State.Waiting.Reason == "ImagePullBackOff"
	})
	var reasons []string
	for _, sp := range w.snapshot() {
		if cs, ok := containerStatus(sp.pod, "c"); ok && cs.State.Waiting != nil {
			if n := len(reasons); n == 0 || reasons[n-1] != cs.State.Waiting.Reason {
				reasons = append(reasons, cs.State.Waiting.Reason)
			}
		}
	}
	joined := strings.Join(reasons, ",")
	if !strings.Contains(joined, "ErrImagePull,ImagePullBackOff") {
		t.Errorf("waiting reasons seen %v, want ErrImagePull then ImagePullBackOff", reasons)
	}
	waitEvent(t, ns, "pull", "BackOff", "", 10*time.Second)
}

func TestLifecycleSidecarStoppedWhenMainCompletes(t *testing.T) {
	ns := newNamespace(t)
	always := v1.ContainerRestartPolicyAlways
	sidecar := busybox("proxy", trapAndSleep)
	sidecar.RestartPolicy = &always
	pod := basePod("sidecar-done", busybox("main", "sleep 2"))
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	pod.Spec.InitContainers = []v1.Container{sidecar}
	createPod(t, ns, pod)
	p := waitPod(t, ns, "sidecar-done", 90*time.Second, "Succeeded", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodSucceeded })
	sc, _ := containerStatus(p, "proxy")
	mc, _ := containerStatus(p, "main")
	if sc.State.Terminated == nil || mc.State.Terminated == nil || sc.State.Terminated.FinishedAt.Before(&mc.State.Terminated.FinishedAt) {
		t.Errorf("the sidecar must be stopped after the main container completed: %s", describeStatus(p))
	}
	kill := waitEvent(t, ns, "sidecar-done", "Killing", "", 10*time.Second)
	if kill.InvolvedObject.FieldPath != "spec.initContainers{proxy}" {
		t.Errorf("Killing event for %s", kill.InvolvedObject.FieldPath)
	}
}
