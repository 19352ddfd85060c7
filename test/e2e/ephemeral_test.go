//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/vk-cri/vk-cri/cri"
)

// ephemeralStatus is the named ephemeral container's status, if the pod reports one.
func ephemeralStatus(p *v1.Pod, name string) (v1.ContainerStatus, bool) {
	for _, st := range p.Status.EphemeralContainerStatuses {
		if st.Name == name {
			return st, true
		}
	}
	return v1.ContainerStatus{}, false
}

func ephemeralRunning(name string) func(*v1.Pod) bool {
	return func(p *v1.Pod) bool {
		st, ok := ephemeralStatus(p, name)
		return ok && st.State.Running != nil
	}
}

func ephemeralTerminated(name string) func(*v1.Pod) bool {
	return func(p *v1.Pod) bool {
		st, ok := ephemeralStatus(p, name)
		return ok && st.State.Terminated != nil
	}
}

// describeEphemeral renders the ephemeral containers' states, for failure messages.
func describeEphemeral(p *v1.Pod) string {
	var b strings.Builder
	for _, st := range p.Status.EphemeralContainerStatuses {
		fmt.Fprintf(&b, "%s: %s; ", st.Name, stateString(st.State))
	}
	return b.String()
}

// targetPod runs container "app" with a process no other container has: a debugger that
// joined its PID namespace sees "sleep 31337".
func targetPod(t *testing.T, ns string) *v1.Pod {
	t.Helper()
	return runningPod(t, ns, basePod("app", busybox("app", "exec sleep 31337")))
}

// runtimeInstances counts the runtime's instances of one container of a pod.
func runtimeInstances(t *testing.T, uid, name string) int {
	t.Helper()
	_, cs := runtimeObjects(t, uid)
	n := 0
	for _, c := range cs {
		if c.Labels[cri.ContainerNameLabel] == name {
			n++
		}
	}
	return n
}

// TestEphemeralDebugTarget: `kubectl debug --target` adds an ephemeral container that runs in
// the pod's sandbox, sees the target's processes, is read by kubectl logs, shows in
// ephemeralContainerStatuses, ends terminated with its exit code and is never restarted.
func TestEphemeralDebugTarget(t *testing.T) {
	ns := newNamespace(t)
	pod := targetPod(t, ns)

	mustKubectl(t, nil, "", "debug", "-n", ns, "app", "--image="+image("busybox:latest"), "--target=app",
		"-c", "debugger", "--", "sh", "-c", "ps; echo debugger-done; exit 3")
	p := waitPod(t, ns, "app", time.Minute, "ephemeral container debugger terminated", ephemeralTerminated("debugger"))
	st, _ := ephemeralStatus(p, "debugger")
	term := st.State.Terminated
	if term.ExitCode != 3 || term.Reason != "Error" {
		t.Errorf("debugger terminated with %d %q, want exit code 3, reason Error", term.ExitCode, term.Reason)
	}
	if st.Image != image("busybox:latest") || st.ImageID == "" || !strings.HasPrefix(st.ContainerID, "containerd://") ||
		term.ContainerID != st.ContainerID || term.StartedAt.IsZero() || term.FinishedAt.IsZero() {
		t.Errorf("debugger status lacks the kubelet's fields: %+v", st)
	}
	if st.Ready || st.Started != nil || st.RestartCount != 0 {
		t.Errorf("debugger: ready=%v started=%v restartCount=%d; the kubelet reports false, unset, 0", st.Ready, st.Started, st.RestartCount)
	}
	if p.Status.Phase != v1.PodRunning || !isRunningReady(p) {
		t.Errorf("the pod should stay Running and Ready: %s", describeStatus(p))
	}
	if got := len(p.Status.ContainerStatuses); got != 1 {
		t.Errorf("containerStatuses has %d entries, want only app's", got)
	}

	logs := mustKubectl(t, nil, "", "logs", "-n", ns, "app", "-c", "debugger")
	if !strings.Contains(logs, "sleep 31337") || !strings.Contains(logs, "debugger-done") {
		t.Errorf("kubectl logs -c debugger should show the target's process and the end marker:\n%s", logs)
	}

	// The kubelet's events, pointed at the ephemeral container.
	want := map[string]bool{"Pulling": false, "Pulled": false, "Created": false, "Started": false}
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		evs, err := s.kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: fields.Set{
			"involvedObject.name": "app", "involvedObject.fieldPath": "spec.ephemeralContainers{debugger}",
		}.String()})
		if err != nil {
			return false, nil
		}
		for _, e := range evs.Items {
			if _, ok := want[e.Reason]; ok {
				want[e.Reason] = true
			}
		}
		for _, seen := range want {
			if !seen {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Errorf("events of spec.ephemeralContainers{debugger}: seen %v", want)
	}

	// Another pod update (a second debugger) makes the node sync the pod again: the first one,
	// exited under restartPolicy Always, is not started again.
	mustKubectl(t, nil, "", "debug", "-n", ns, "app", "--image="+image("busybox:latest"), "-c", "second", "--", "sh", "-c", "sleep 3600")
	p = waitPod(t, ns, "app", time.Minute, "second debugger running", ephemeralRunning("second"))
	if st, _ := ephemeralStatus(p, "debugger"); st.State.Terminated == nil || st.RestartCount != 0 {
		t.Errorf("debugger after the next sync: %s", describeEphemeral(p))
	}
	if n := runtimeInstances(t, string(pod.UID), "debugger"); n != 1 {
		t.Errorf("the runtime holds %d instances of debugger, want 1 (never restarted)", n)
	}
	// Without a target the debugger has a PID namespace of its own.
	out := mustKubectl(t, nil, "", "exec", "-n", ns, "app", "-c", "second", "--", "ps")
	if strings.Contains(out, "sleep 31337") {
		t.Errorf("a debugger without --target sees the app's processes:\n%s", out)
	}
}

// TestEphemeralInteractive: `kubectl debug -i --target` attaches to the new container's stdin
// and stdout; kubectl exec runs in an ephemeral container; `kubectl attach -i` reaches one
// added through the API; running ones are killed with the pod.
func TestEphemeralInteractive(t *testing.T) {
	ns := newNamespace(t)
	pod := targetPod(t, ns)

	// kubectl debug -i waits for the container to run, then attaches: the script comes through
	// its stdin. (With a piped, non-terminal stdin kubectl v1.37 prints none of the session's
	// output, against the upstream kubelet too: the container's log has it.)
	r := kubectl(t, 2*time.Minute, nil, "ps\necho interactive-done\nexit 4\n",
		"debug", "-i", "-n", ns, "app", "--image="+image("busybox:latest"), "--target=app", "-c", "shell", "--", "sh")
	if r.code != 0 {
		t.Errorf("kubectl debug -i: exit code %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	p := waitPod(t, ns, "app", time.Minute, "shell terminated", ephemeralTerminated("shell"))
	if st, _ := ephemeralStatus(p, "shell"); st.State.Terminated.ExitCode != 4 {
		t.Errorf("shell: %s, want exit code 4", describeEphemeral(p))
	}
	if logs := mustKubectl(t, nil, "", "logs", "-n", ns, "app", "-c", "shell"); !strings.Contains(logs, "sleep 31337") || !strings.Contains(logs, "interactive-done") {
		t.Errorf("the interactive session's output (its stdin ran ps and echo) is not in its log:\n%s", logs)
	}

	// An ephemeral container added through the ephemeralcontainers subresource, as any client
	// may, with a stdin: kubectl exec and kubectl attach both reach it.
	ctx := ctxFor(t, time.Minute)
	cur, err := s.kube.CoreV1().Pods(ns).Get(ctx, "app", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Spec.EphemeralContainers = append(cur.Spec.EphemeralContainers, v1.EphemeralContainer{
		EphemeralContainerCommon: v1.EphemeralContainerCommon{
			Name: "attachable", Image: image("busybox:latest"), Command: []string{"sh"},
			Stdin: true, StdinOnce: true, TerminationMessagePolicy: v1.TerminationMessageReadFile,
		},
		TargetContainerName: "app",
	})
	if _, err := s.kube.CoreV1().Pods(ns).UpdateEphemeralContainers(ctx, "app", cur, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("adding an ephemeral container: %v", err)
	}
	waitPod(t, ns, "app", time.Minute, "attachable running", ephemeralRunning("attachable"))

	if out := mustKubectl(t, nil, "", "exec", "-n", ns, "app", "-c", "attachable", "--", "cat", "/proc/1/cmdline"); !strings.Contains(out, "31337") {
		t.Errorf("PID 1 of a targeting container is the target's process; /proc/1/cmdline = %q", out)
	}
	r = kubectl(t, time.Minute, nil, "echo attached-ok\nexit 7\n", "attach", "-i", "-n", ns, "app", "-c", "attachable")
	if !strings.Contains(r.stdout, "attached-ok") {
		t.Errorf("kubectl attach -i output: %q (stderr %q)", r.stdout, r.stderr)
	}
	p = waitPod(t, ns, "app", time.Minute, "attachable terminated", ephemeralTerminated("attachable"))
	if st, _ := ephemeralStatus(p, "attachable"); st.State.Terminated.ExitCode != 7 {
		t.Errorf("attachable: %s, want exit code 7", describeEphemeral(p))
	}

	// A running ephemeral container goes with the pod.
	mustKubectl(t, nil, "", "debug", "-n", ns, "app", "--image="+image("busybox:latest"), "-c", "lingering", "--", "sleep", "3600")
	waitPod(t, ns, "app", time.Minute, "lingering running", ephemeralRunning("lingering"))
	if err := s.kube.CoreV1().Pods(ns).Delete(ctx, "app", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPodGone(t, ns, "app", time.Minute)
	if _, cs := runtimeObjects(t, string(pod.UID)); len(cs) != 0 {
		t.Errorf("the runtime still holds %d containers of the deleted pod", len(cs))
	}
}

// TestEphemeralLogsFollow: kubectl logs -f of a running ephemeral container streams its output
// as it is written.
func TestEphemeralLogsFollow(t *testing.T) {
	ns := newNamespace(t)
	targetPod(t, ns)
	mustKubectl(t, nil, "", "debug", "-n", ns, "app", "--image="+image("busybox:latest"), "-c", "ticker", "--",
		"sh", "-c", "i=0; while true; do i=$((i+1)); echo tick-$i; sleep 1; done")
	waitPod(t, ns, "app", time.Minute, "ticker running", ephemeralRunning("ticker"))

	ctx := ctxFor(t, time.Minute)
	cmd := exec.CommandContext(ctx, s.env["KUBECTL"], "--kubeconfig", s.env["KUBECONFIG"], "logs", "-f", "-n", ns, "app", "-c", "ticker")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	sc := bufio.NewScanner(stdout)
	seen := 0
	for seen < 3 && sc.Scan() {
		if strings.HasPrefix(sc.Text(), "tick-") {
			seen++
		}
	}
	if seen < 3 {
		rest, _ := io.ReadAll(stdout)
		t.Errorf("kubectl logs -f showed %d ticks: %v %s", seen, sc.Err(), rest)
	}
}

// TestEphemeralStoppedWhenPodCompletes: an ephemeral container keeps nothing alive. When the
// regular container of a restartPolicy Never pod completes, the still-running debugger gets its
// SIGTERM (a Killing event) and the pod ends Succeeded only once it has stopped, as with the
// kubelet.
func TestEphemeralStoppedWhenPodCompletes(t *testing.T) {
	ns := newNamespace(t)
	pod := basePod("app", busybox("app", "sleep 4"))
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	runningPod(t, ns, pod)
	mustKubectl(t, nil, "", "debug", "-n", ns, "app", "--image="+image("busybox:latest"), "-c", "lingering", "--",
		"sh", "-c", "trap 'echo got TERM; exit 0' TERM; sleep 3600 & wait")
	waitPod(t, ns, "app", time.Minute, "lingering running", ephemeralRunning("lingering"))

	p := waitPod(t, ns, "app", time.Minute, "Succeeded", func(p *v1.Pod) bool {
		// A terminal phase is never reported while the debugger still runs.
		if st, _ := ephemeralStatus(p, "lingering"); p.Status.Phase == v1.PodSucceeded && st.State.Running != nil {
			t.Fatalf("pod Succeeded with its ephemeral container still running: %s", describeEphemeral(p))
		}
		return p.Status.Phase == v1.PodSucceeded
	})
	st, _ := ephemeralStatus(p, "lingering")
	if st.State.Terminated == nil || st.State.Terminated.ExitCode != 0 {
		t.Errorf("lingering: %s; want terminated with exit code 0 (it trapped SIGTERM)", describeEphemeral(p))
	}
	if logs := mustKubectl(t, nil, "", "logs", "-n", ns, "app", "-c", "lingering"); !strings.Contains(logs, "got TERM") {
		t.Errorf("lingering's log %q: it was not stopped with SIGTERM", logs)
	}
	evs, err := s.kube.CoreV1().Events(ns).List(ctxFor(t, 30*time.Second), metav1.ListOptions{FieldSelector: fields.Set{
		"involvedObject.name": "app", "involvedObject.fieldPath": "spec.ephemeralContainers{lingering}", "reason": "Killing",
	}.String()})
	if err != nil || len(evs.Items) == 0 {
		t.Errorf("no Killing event for lingering: %v", err)
	}
}
