package provider

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestStopPrerequisites(t *testing.T) {
	pod := testPod(
		withInit(sidecarCtr("log"), ctr("setup"), sidecarCtr("proxy"), sidecarCtr("metrics")),
		withContainers(ctr("a"), ctr("b")),
	)
	cases := []struct {
		name    string
		running []string
		want    map[string][]string
	}{
		{"regular containers wait for nobody; sidecars stop last, in reverse order",
			[]string{"a", "b", "log", "proxy", "metrics"},
			map[string][]string{"metrics": {"a", "b"}, "proxy": {"a", "b", "metrics"}, "log": {"a", "b", "proxy"}}},
		{"a stopped regular container holds nobody up",
			[]string{"b", "log", "proxy", "metrics"},
			map[string][]string{"metrics": {"b"}, "proxy": {"b", "metrics"}, "log": {"b", "proxy"}}},
		{"only the next sidecar counts, and only while it runs",
			[]string{"a", "log", "metrics"},
			map[string][]string{"metrics": {"a"}, "log": {"a"}}},
		{"sidecars alone: reverse order",
			[]string{"log", "proxy"},
			map[string][]string{"log": {"proxy"}}},
		{"no sidecars running: nobody waits",
			[]string{"a", "b"},
			map[string][]string{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := stopPrerequisites(pod, tc.running)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestActiveDeadline(t *testing.T) {
	start := metav1.NewTime(testT0)
	cases := []struct {
		name     string
		deadline *int64
		start    *metav1.Time
		now      time.Time
		exceeded bool
		left     time.Duration
	}{
		{"no deadline", nil, &start, testT0.Add(time.Hour), false, 0},
		{"not started yet", ptrTo[int64](5), nil, testT0.Add(time.Hour), false, 0},
		{"before the deadline", ptrTo[int64](5), &start, testT0.Add(2 * time.Second), false, 3 * time.Second},
		{"at the deadline", ptrTo[int64](5), &start, testT0.Add(5 * time.Second), true, 0},
		{"raised by an update", ptrTo[int64](60), &start, testT0.Add(10 * time.Second), false, 50 * time.Second},
		{"lowered by an update below the time already run", ptrTo[int64](3), &start, testT0.Add(10 * time.Second), true, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := testPod()
			pod.Spec.ActiveDeadlineSeconds = tc.deadline
			exceeded, left := activeDeadline(pod, tc.start, tc.now)
			if exceeded != tc.exceeded || left != tc.left {
				t.Errorf("got (%v, %v), want (%v, %v)", exceeded, left, tc.exceeded, tc.left)
			}
		})
	}
}

func TestDeadlineFailureInStatus(t *testing.T) {
	c := ctr("app")
	pod := testPod(withContainers(c))
	st := generatePodStatus(statusInput{
		Pod:      pod,
		Runtime:  rtOf(sbs(sandbox("sb1", 0, false)), exited(c, "c1", "sb1", 137)),
		Terminal: true,
		Failure:  &podFailure{Reason: reasonDeadlineExceeded, Message: messageDeadlineExceeded},
		Now:      testT0,
	})
	if st.Phase != v1.PodFailed || st.Reason != reasonDeadlineExceeded || st.Message != messageDeadlineExceeded {
		t.Fatalf("phase/reason/message = %s/%s/%s", st.Phase, st.Reason, st.Message)
	}
	// Later statuses keep the reason that belongs to the phase.
	pod.Status = st
	again := generatePodStatus(statusInput{Pod: pod, Runtime: rtOf(nil, exited(c, "c1", "sb1", 137)), Terminal: true, Now: testT0.Add(time.Minute)})
	if again.Phase != v1.PodFailed || again.Reason != reasonDeadlineExceeded {
		t.Errorf("re-reported phase/reason = %s/%s", again.Phase, again.Reason)
	}
}

func TestMayRunAgainHidesReasonsOfContainersDoneForGood(t *testing.T) {
	c := ctr("app")
	never := testPod(withRestart(v1.RestartPolicyNever), withContainers(c))
	st := generatePodStatus(statusInput{
		Pod:     never,
		Runtime: rtOf(sbs(sandbox("sb1", 0, true)), exited(c, "c1", "sb1", 143)),
		Reasons: map[string]waitingReason{"app": {Reason: reasonPostStartHookError, Message: "hook failed"}},
		Now:     testT0,
	})
	if got := st.ContainerStatuses[0].State; got.Terminated == nil {
		t.Errorf("restartPolicy Never: state = %+v, want terminated (no restart, so no waiting reason)", got)
	}
	always := testPod(withContainers(c))
	st = generatePodStatus(statusInput{
		Pod:     always,
		Runtime: rtOf(sbs(sandbox("sb1", 0, true)), exited(c, "c1", "sb1", 143)),
		Reasons: map[string]waitingReason{"app": {Reason: reasonPostStartHookError, Message: "hook failed"}},
		Now:     testT0,
	})
	cs := st.ContainerStatuses[0]
	if cs.State.Waiting == nil || cs.State.Waiting.Reason != reasonPostStartHookError || cs.LastTerminationState.Terminated == nil {
		t.Errorf("restartPolicy Always: state = %+v last = %+v, want waiting PostStartHookError after terminated", cs.State, cs.LastTerminationState)
	}
}

func TestHookURL(t *testing.T) {
	c := &v1.Container{Name: "web", Ports: []v1.ContainerPort{{Name: "http", ContainerPort: 8080}}}
	cases := []struct {
		name string
		g    v1.HTTPGetAction
		want string
		err  bool
	}{
		{"numeric port, default scheme", v1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(80)}, "http://10.0.0.1:80/healthz", false},
		{"named port", v1.HTTPGetAction{Path: "/x", Port: intstr.FromString("http")}, "http://10.0.0.1:8080/x", false},
		{"path without slash, query kept", v1.HTTPGetAction{Path: "stop?now=1", Port: intstr.FromInt32(81)}, "http://10.0.0.1:81/stop?now=1", false},
		{"https", v1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(443), Scheme: v1.URISchemeHTTPS}, "https://10.0.0.1:443/", false},
		{"unknown named port", v1.HTTPGetAction{Port: intstr.FromString("nope")}, "", true},
		{"port out of range", v1.HTTPGetAction{Port: intstr.FromInt32(70000)}, "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u, err := hookURL(&tc.g, c, "10.0.0.1")
			if (err != nil) != tc.err {
				t.Fatalf("err = %v, want error %v", err, tc.err)
			}
			if err == nil && u.String() != tc.want {
				t.Errorf("url = %s, want %s", u, tc.want)
			}
		})
	}
}

func TestHookRunner(t *testing.T) {
	pod := testPod()
	c := &pod.Spec.Containers[0]
	var gotPath, gotAgent, gotHeader string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotPath, gotAgent, gotHeader = r.URL.Path, r.UserAgent(), r.Header.Get("X-Why")
		// Any answer is a success for a hook, even an error status.
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	host, port := u.Hostname(), u.Port()

	var execID string
	var execCmd []string
	r := &hookRunner{
		exec: func(_ context.Context, id string, cmd []string) ([]byte, error) {
			execID, execCmd = id, cmd
			if cmd[0] == "false" {
				return []byte("it failed"), errors.New("command 'false' exited with 1")
			}
			return nil, nil
		},
		podIP:  func(context.Context, *v1.Pod) (string, error) { return host, nil },
		client: newHookHTTPClient(),
	}
	target := hookTarget{Pod: pod, Container: c, ContainerID: "cid"}
	ctx := context.Background()

	if _, err := r.run(ctx, target, &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"touch", "/x"}}}); err != nil || execID != "cid" || execCmd[0] != "touch" {
		t.Errorf("exec: err=%v id=%s cmd=%v", err, execID, execCmd)
	}
	msg, err := r.run(ctx, target, &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"false"}}})
	if err == nil || !strings.Contains(msg, `Exec lifecycle hook ([false]) for Container "app" in Pod "web_default(uid-1)" failed`) || !strings.Contains(msg, "it failed") {
		t.Errorf("failing exec: err=%v msg=%q", err, msg)
	}

	portNum := intstr.Parse(port)
	get := &v1.LifecycleHandler{HTTPGet: &v1.HTTPGetAction{Path: "/pre-stop", Port: portNum, HTTPHeaders: []v1.HTTPHeader{{Name: "X-Why", Value: "stop"}}}}
	if _, err := r.run(ctx, target, get); err != nil {
		t.Fatalf("httpGet: %v", err)
	}
	if gotPath != "/pre-stop" || gotAgent != "kube-lifecycle/1.37" || gotHeader != "stop" {
		t.Errorf("request: path=%s agent=%s header=%s", gotPath, gotAgent, gotHeader)
	}
	srv.Close()
	if msg, err := r.run(ctx, target, get); err == nil || !strings.Contains(msg, `HTTP lifecycle hook (/pre-stop) for Container "app"`) {
		t.Errorf("httpGet to a closed server: err=%v msg=%q", err, msg)
	}

	start := time.Now()
	if _, err := r.run(ctx, target, &v1.LifecycleHandler{Sleep: &v1.SleepAction{Seconds: 0}}); err != nil {
		t.Errorf("sleep 0: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if msg, err := r.run(cctx, target, &v1.LifecycleHandler{Sleep: &v1.SleepAction{Seconds: 3600}}); err == nil || !strings.Contains(msg, "Sleep lifecycle hook (3600)") {
		t.Errorf("cut sleep: err=%v msg=%q", err, msg)
	}
	if time.Since(start) > time.Minute {
		t.Errorf("sleep hooks did not return when their context ended")
	}
	if _, err := r.run(ctx, target, &v1.LifecycleHandler{}); err == nil {
		t.Errorf("empty handler: no error")
	}
}

func TestTerminationMessageFromFile(t *testing.T) {
	dir := t.TempDir()
	pod := testPod()
	c := pod.Spec.Containers[0]
	c.TerminationMessagePath = "/dev/termination-log"
	m, err := terminationMessageMount(dir, pod, &c)
	if err != nil || m == nil {
		t.Fatalf("mount: %v %v", m, err)
	}
	if fi, err := os.Stat(m.HostPath); err != nil || fi.Mode().Perm() != 0o666 || !strings.HasPrefix(m.HostPath, filepath.Join(dir, "pods", testPodUID, "containers", "app")) {
		t.Fatalf("message file %s: %v %v", m.HostPath, fi, err)
	}
	st := &runtimeapi.ContainerStatus{Mounts: []*runtimeapi.Mount{{ContainerPath: "/dev/termination-log", HostPath: m.HostPath}}}

	if msg, logs := terminationMessageFromFile(st, "/dev/termination-log", true); msg != "" || !logs {
		t.Errorf("empty file with fallback: %q %v, want the logs", msg, logs)
	}
	big := strings.Repeat("x", 5000) + "THE END"
	if err := os.WriteFile(m.HostPath, []byte(big), 0o666); err != nil {
		t.Fatal(err)
	}
	msg, logs := terminationMessageFromFile(st, "/dev/termination-log", true)
	if logs || len(msg) != maxTerminationMessageBytes || !strings.HasSuffix(msg, "THE END") {
		t.Errorf("long message: len %d logs %v, want its last %d bytes", len(msg), logs, maxTerminationMessageBytes)
	}
	if msg, logs := terminationMessageFromFile(st, "/elsewhere", false); msg != "" || logs {
		t.Errorf("unmounted path: %q %v", msg, logs)
	}
	if err := removePodContainerDirs(dir, testPodUID); err != nil {
		t.Fatal(err)
	}
	if msg, logs := terminationMessageFromFile(st, "/dev/termination-log", true); msg != "" || !logs {
		t.Errorf("file gone: %q %v", msg, logs)
	}
	c.TerminationMessagePath = ""
	if m, err := terminationMessageMount(dir, pod, &c); m != nil || err != nil {
		t.Errorf("no path: %v %v", m, err)
	}
}

func TestLimitTerminationMessages(t *testing.T) {
	pod := testPod(withInit(ctr("init")), withContainers(ctr("a"), ctr("b")))
	long := strings.Repeat("m", 5000)
	s := v1.PodStatus{
		InitContainerStatuses: []v1.ContainerStatus{{Name: "init", State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{Message: long}}}},
		ContainerStatuses: []v1.ContainerStatus{
			{Name: "a", State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{Message: "short"}}},
			{Name: "b", LastTerminationState: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{Message: long}}},
		},
	}
	limitTerminationMessages(pod, &s)
	per := maxPodTerminationMessageBytes / 3
	if got := len(s.InitContainerStatuses[0].State.Terminated.Message); got != per {
		t.Errorf("init message %d bytes, want %d", got, per)
	}
	if got := s.ContainerStatuses[0].State.Terminated.Message; got != "short" {
		t.Errorf("short message changed: %q", got)
	}
	if got := len(s.ContainerStatuses[1].LastTerminationState.Terminated.Message); got != per {
		t.Errorf("last state message %d bytes, want %d", got, per)
	}
}

func TestSurplusDeadInstances(t *testing.T) {
	a, b := ctr("a"), ctr("b")
	rt := rtOf(sbs(sandbox("sb1", 0, true)),
		running(a, "a3", "sb1", restarts(3)),
		exited(a, "a2", "sb1", 1, restarts(2)),
		exited(a, "a1", "sb1", 1, restarts(1)),
		exited(b, "b1", "sb1", 1, restarts(1)),
		exited(b, "b0", "sb1", 1, restarts(0)),
	)
	var ids []string
	for _, c := range surplusDeadInstances(rt) {
		ids = append(ids, c.ID)
	}
	// The newest dead instance of each container stays (its logs, its status); older ones go.
	if want := []string{"a1", "b0"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("removed %v, want %v", ids, want)
	}
	if got := surplusDeadInstances(rtOf(nil, running(a, "a0", "sb1"))); len(got) != 0 {
		t.Errorf("a running container alone: removed %v", got)
	}
}

func TestLastStateKeptWhenThePreviousInstanceIsGone(t *testing.T) {
	c := ctr("app")
	pod := testPod(withContainers(c))
	// The status reported while instance 1 had just died, with instance 0 in the runtime.
	pod.Status = generatePodStatus(statusInput{
		Pod: pod, RuntimeName: "containerd", Now: testT0,
		Runtime: rtOf(sbs(sandbox("sb1", 0, true)), exited(c, "c1", "sb1", 2, restarts(1)), exited(c, "c0", "sb1", 1)),
	})
	// Instance 0 removed, the back-off shown: the last state is the instance that just died.
	st := generatePodStatus(statusInput{
		Pod: pod, RuntimeName: "containerd", Now: testT0,
		Runtime: rtOf(sbs(sandbox("sb1", 0, true)), exited(c, "c1", "sb1", 2, restarts(1))),
		Reasons: map[string]waitingReason{"app": {Reason: reasonCrashLoopBackOff}},
	})
	cs := st.ContainerStatuses[0]
	if cs.State.Waiting == nil || cs.LastTerminationState.Terminated == nil || cs.LastTerminationState.Terminated.ExitCode != 2 {
		t.Fatalf("state %+v last %+v", cs.State, cs.LastTerminationState)
	}
	// Instance 2 running: the last state carried over from the status is instance 1's.
	pod.Status = st
	st = generatePodStatus(statusInput{
		Pod: pod, RuntimeName: "containerd", Now: testT0,
		Runtime: rtOf(sbs(sandbox("sb1", 0, true)), running(c, "c2", "sb1", restarts(2)), exited(c, "c1", "sb1", 2, restarts(1))),
	})
	if lt := st.ContainerStatuses[0].LastTerminationState.Terminated; lt == nil || lt.ContainerID != "containerd://c1" {
		t.Errorf("last state %+v", lt)
	}
	// Only instance 2 left in the runtime (running): the status keeps instance 1 as last state.
	pod.Status = st
	st = generatePodStatus(statusInput{
		Pod: pod, RuntimeName: "containerd", Now: testT0,
		Runtime: rtOf(sbs(sandbox("sb1", 0, true)), running(c, "c2", "sb1", restarts(2))),
	})
	if lt := st.ContainerStatuses[0].LastTerminationState.Terminated; lt == nil || lt.ContainerID != "containerd://c1" {
		t.Errorf("carried-over last state %+v", lt)
	}
}

func TestSyncWorthy(t *testing.T) {
	prev := map[string]string{"ss1": "true", "cc1": "CONTAINER_EXITED", "cc0": "CONTAINER_EXITED"}
	cases := []struct {
		name string
		cur  map[string]string
		want bool
	}{
		{"unchanged", map[string]string{"ss1": "true", "cc1": "CONTAINER_EXITED", "cc0": "CONTAINER_EXITED"}, false},
		{"a dead instance removed", map[string]string{"ss1": "true", "cc1": "CONTAINER_EXITED"}, false},
		{"a new container", map[string]string{"ss1": "true", "cc1": "CONTAINER_EXITED", "cc0": "CONTAINER_EXITED", "cc2": "CONTAINER_RUNNING"}, true},
		{"a state change", map[string]string{"ss1": "false", "cc1": "CONTAINER_EXITED", "cc0": "CONTAINER_EXITED"}, true},
	}
	for _, tc := range cases {
		if got := syncWorthy(prev, tc.cur); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if !syncWorthy(nil, map[string]string{"ss1": "true"}) {
		t.Errorf("a new pod is not sync-worthy")
	}
}

func TestBackoffResync(t *testing.T) {
	for _, tc := range []struct{ remaining, min, max time.Duration }{
		{10 * time.Second, 10 * time.Second, 15 * time.Second},
		{5 * time.Minute, time.Minute, 90 * time.Second},
	} {
		for i := 0; i < 50; i++ {
			if d := backoffResync(tc.remaining); d < tc.min || d > tc.max {
				t.Fatalf("backoffResync(%v) = %v, want within [%v, %v]", tc.remaining, d, tc.min, tc.max)
			}
		}
	}
}
