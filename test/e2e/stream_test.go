//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// kubectl's two streaming protocols: WebSocket is its default, the environment variables force
// SPDY (the API server passes both through to the node).
var streamProtocols = []struct {
	name string
	env  []string
}{
	{"websocket", nil},
	{"spdy", []string{"KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false", "KUBECTL_PORT_FORWARD_WEBSOCKETS=false"}},
}

type kubectlResult struct {
	stdout, stderr string
	code           int
}

// kubectl runs the stack's kubectl v1.37 as the cluster admin, through the API server.
func kubectl(t *testing.T, timeout time.Duration, env []string, stdin string, args ...string) kubectlResult {
	t.Helper()
	ctx := ctxFor(t, timeout)
	cmd := exec.CommandContext(ctx, s.env["KUBECTL"], append([]string{"--kubeconfig", s.env["KUBECONFIG"]}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	res := kubectlResult{stdout: out.String(), stderr: errOut.String()}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr) && ctx.Err() == nil:
		res.code = exitErr.ExitCode()
	default:
		t.Fatalf("kubectl %v: %v\nstdout: %s\nstderr: %s", args, err, res.stdout, res.stderr)
	}
	return res
}

// mustKubectl is kubectl that must succeed.
func mustKubectl(t *testing.T, env []string, stdin string, args ...string) string {
	t.Helper()
	r := kubectl(t, time.Minute, env, stdin, args...)
	if r.code != 0 {
		t.Fatalf("kubectl %v: exit code %d\nstdout: %s\nstderr: %s", args, r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

func runningPod(t *testing.T, ns string, pod *v1.Pod) *v1.Pod {
	t.Helper()
	createPod(t, ns, pod)
	return waitPod(t, ns, pod.Name, 2*time.Minute, "Running and Ready", isRunningReady)
}

func TestStreamNodeDeclaresWebSocketStreams(t *testing.T) {
	n, err := s.kube.CoreV1().Nodes().Get(ctxFor(t, 30*time.Second), nodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Without it the API server would translate WebSocket to SPDY itself and vk-cri's
	// WebSocket path would go untested.
	if !slices.Contains(n.Status.DeclaredFeatures, "ExtendWebSocketsToKubelet") {
		t.Fatalf("node declares %v, want ExtendWebSocketsToKubelet as the kubelet does", n.Status.DeclaredFeatures)
	}
}

func TestLogsOptions(t *testing.T) {
	ns := newNamespace(t)
	runningPod(t, ns, basePod("logs",
		busybox("c", `for i in 1 2 3 4 5; do echo "line $i"; done; sleep 1; echo "to stderr" >&2; sleep 3600`),
		busybox("other", `echo other container; sleep 3600`)))
	all := "line 1\nline 2\nline 3\nline 4\nline 5\nto stderr\n"
	// The container may not have written everything the moment it runs.
	waitLogs(t, ns, "logs", "c", all)

	cases := []struct {
		name string
		args []string
		want string
	}{
		{"all", nil, all},
		{"tail", []string{"--tail=2"}, "line 5\nto stderr\n"},
		{"tail all", []string{"--tail=-1"}, all},
		{"limit bytes", []string{"--limit-bytes=9"}, "line 1\nli"},
		{"since seconds", []string{"--since=1h"}, all},
		{"since time in the future", []string{"--since-time=" + time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}, ""},
		{"since time in the past", []string{"--since-time=" + time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)}, all},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := mustKubectl(t, nil, "", append([]string{"logs", "-n", ns, "logs", "-c", "c"}, c.args...)...)
			if got != c.want {
				t.Errorf("kubectl logs %v = %q, want %q", c.args, got, c.want)
			}
		})
	}

	t.Run("timestamps", func(t *testing.T) {
		got := mustKubectl(t, nil, "", "logs", "-n", ns, "logs", "-c", "c", "--timestamps", "--tail=2")
		lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
		if len(lines) != 2 {
			t.Fatalf("got %q, want two lines", got)
		}
		for i, want := range []string{"line 5", "to stderr"} {
			ts, text, ok := strings.Cut(lines[i], " ")
			if _, err := time.Parse(time.RFC3339Nano, ts); !ok || err != nil || text != want {
				t.Errorf("line %q: want an RFC 3339 time then %q", lines[i], want)
			}
		}
	})
	t.Run("other container", func(t *testing.T) {
		waitLogs(t, ns, "logs", "other", "other container\n")
	})
	t.Run("previous without a restart", func(t *testing.T) {
		r := kubectl(t, time.Minute, nil, "", "logs", "-n", ns, "logs", "-c", "c", "--previous")
		want := `Error from server (BadRequest): previous terminated container "c" in pod "logs" not found`
		if r.code == 0 || strings.TrimSpace(r.stderr) != want {
			t.Errorf("exit %d, stderr %q; want an error %q", r.code, r.stderr, want)
		}
	})
}

// waitLogs waits until kubectl logs of a container prints want.
func waitLogs(t *testing.T, ns, pod, container, want string) {
	t.Helper()
	var got string
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		got = mustKubectl(t, nil, "", "logs", "-n", ns, pod, "-c", container)
		return got == want, nil
	})
	if err != nil {
		t.Fatalf("kubectl logs %s -c %s = %q, want %q", pod, container, got, want)
	}
}

func TestLogsWaitingContainerIsABadRequest(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, basePod("pending", v1.Container{Name: "c", Image: image("does-not-exist:1.0")}))
	waitPod(t, ns, "pending", time.Minute, "an image pull failure", func(p *v1.Pod) bool {
		return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Waiting != nil &&
			strings.Contains(p.Status.ContainerStatuses[0].State.Waiting.Reason, "Pull")
	})
	r := kubectl(t, time.Minute, nil, "", "logs", "-n", ns, "pending")
	re := regexp.MustCompile(`^Error from server \(BadRequest\): container "c" in pod "pending" is waiting to start: (image can't be pulled|trying and failing to pull image)$`)
	if r.code == 0 || !re.MatchString(strings.TrimSpace(r.stderr)) {
		t.Errorf("exit %d, stderr %q; want the kubelet's waiting message", r.code, r.stderr)
	}
}

func TestLogsFollow(t *testing.T) {
	ns := newNamespace(t)
	runningPod(t, ns, basePod("ticker", busybox("c", `i=0; while true; do i=$((i+1)); echo "tick $i"; sleep 0.2; done`)))

	ctx := ctxFor(t, time.Minute)
	cmd := exec.CommandContext(ctx, s.env["KUBECTL"], "--kubeconfig", s.env["KUBECONFIG"], "logs", "-n", ns, "ticker", "-f", "--tail=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	// Lines written after kubectl started must keep arriving, in order, without gaps.
	sc := bufio.NewScanner(out)
	var seen []int
	for len(seen) < 10 && sc.Scan() {
		var n int
		if _, err := fmt.Sscanf(sc.Text(), "tick %d", &n); err != nil {
			t.Fatalf("unexpected line %q", sc.Text())
		}
		if len(seen) > 0 && n != seen[len(seen)-1]+1 {
			t.Fatalf("line %d after %d", n, seen[len(seen)-1])
		}
		seen = append(seen, n)
	}
	if len(seen) < 10 {
		t.Fatalf("kubectl logs -f stopped after %v: %v", seen, sc.Err())
	}
}

func TestLogsPreviousAfterRestart(t *testing.T) {
	ns := newNamespace(t)
	// Each instance names itself with a random ID and exits 1 once told to by a file.
	pod := basePod("restarts", busybox("c", `echo "instance $(cat /proc/sys/kernel/random/uuid)"; while [ ! -f /tmp/stop ]; do sleep 0.1; done; exit 1`))
	runningPod(t, ns, pod)
	waitLogs0 := func() string {
		var got string
		_ = wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			got = mustKubectl(t, nil, "", "logs", "-n", ns, "restarts")
			return strings.HasPrefix(got, "instance "), nil
		})
		return got
	}
	first := waitLogs0()
	mustKubectl(t, nil, "", "exec", "-n", ns, "restarts", "--", "touch", "/tmp/stop")
	waitPod(t, ns, "restarts", 2*time.Minute, "a restart", func(p *v1.Pod) bool {
		return p.Status.ContainerStatuses[0].RestartCount == 1 && p.Status.ContainerStatuses[0].State.Running != nil
	})
	current := waitLogs0()
	previous := mustKubectl(t, nil, "", "logs", "-n", ns, "restarts", "--previous")
	if previous != first {
		t.Errorf("--previous = %q, want the first instance's %q", previous, first)
	}
	if current == first || !strings.HasPrefix(current, "instance ") {
		t.Errorf("current log %q, want the second instance's own", current)
	}
}

func TestLogsRotateBySizeAndCount(t *testing.T) {
	ns := newNamespace(t)
	// About 70 bytes a line, far more than the e2e node's 64 KiB rotation size per second.
	p := runningPod(t, ns, basePod("noisy", busybox("c",
		`i=0; while true; do i=$((i+1)); echo "line $i 0123456789012345678901234567890123456789012345678901"; if [ $((i % 500)) = 0 ]; then sleep 0.1; fi; done`)))
	dir := filepath.Join(s.env["STACK_DIR"], "nodes", nodeName, "pods-logs", fmt.Sprintf("%s_%s_%s", ns, p.Name, p.UID), "c")
	// A follower started now keeps receiving lines, in order, across the rotations. (Lines that
	// containerd flushes to the old file after it opened the new one can be skipped: the
	// kubelet's reader, cri-client's, switches files on that event, so the kubelet skips them too.)
	followed := followLines(t, ns, "noisy")
	rotated := regexp.MustCompile(`^0\.log\.\d{8}-\d{6}(\.gz)?$`)
	var names []string
	err := wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return false, nil
		}
		names = names[:0]
		gz := 0
		for _, e := range entries {
			names = append(names, e.Name())
			if strings.HasSuffix(e.Name(), ".gz") {
				gz++
			}
		}
		return gz > 0, nil
	})
	if err != nil {
		t.Fatalf("no compressed rotated log in %s: %v", dir, names)
	}
	// The count holds while the container keeps writing: the policy is 3 files.
	for i := 0; i < 3; i++ {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var files []string
		for _, e := range entries {
			files = append(files, e.Name())
		}
		if len(files) > 3 || !slices.Contains(files, "0.log") {
			t.Fatalf("log files %v: want 0.log and at most 2 rotated files", files)
		}
		for _, f := range files {
			if f != "0.log" && !rotated.MatchString(f) && !strings.HasSuffix(f, ".tmp") {
				t.Errorf("unexpected file %s", f)
			}
		}
		time.Sleep(time.Second) // let further rotations happen; the checks above hold at every moment
	}
	n, lastSeen, disorder, gaps := followed()
	if disorder != "" || n < 2000 {
		t.Errorf("kubectl logs -f across rotations: %d lines, out of order: %q", n, disorder)
	}
	t.Logf("kubectl logs -f across rotations: %d lines up to line %d, %d gap(s)", n, lastSeen, gaps)
	// kubectl logs reads the current file, which holds the newest lines: past what the follower
	// saw. (Right after a rotation the current file can still be empty, as with the kubelet,
	// which reads only that file too: ask again then.)
	var last string
	newest := 0
	err = wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 15*time.Second, true, func(context.Context) (bool, error) {
		last = mustKubectl(t, nil, "", "logs", "-n", ns, "noisy", "--tail=1")
		_, err := fmt.Sscanf(last, "line %d", &newest)
		return err == nil, nil
	})
	if err != nil || newest < lastSeen {
		t.Errorf("last line %q, want one after line %d", last, lastSeen)
	}

	// The pod's logs go with the pod.
	zero := int64(0)
	if err := s.kube.CoreV1().Pods(ns).Delete(ctxFor(t, 30*time.Second), "noisy", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	podDir := filepath.Dir(dir)
	err = wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		_, err := os.Stat(podDir)
		return os.IsNotExist(err), nil
	})
	if err != nil {
		t.Errorf("pod log directory %s still there after the pod was deleted", podDir)
	}
}

func TestStreamExecExitCodesAndStdin(t *testing.T) {
	ns := newNamespace(t)
	runningPod(t, ns, basePod("sh", busybox("c", "sleep 3600")))
	for _, proto := range streamProtocols {
		t.Run(proto.name, func(t *testing.T) {
			r := kubectl(t, time.Minute, proto.env, "", "exec", "-n", ns, "sh", "--", "sh", "-c", "echo out; echo err >&2; exit 3")
			if r.code != 3 || r.stdout != "out\n" || !strings.Contains(r.stderr, "err\n") {
				t.Errorf("exit %d stdout %q stderr %q; want 3, out, err", r.code, r.stdout, r.stderr)
			}
			if r := kubectl(t, time.Minute, proto.env, "", "exec", "-n", ns, "sh", "--", "true"); r.code != 0 {
				t.Errorf("true: exit %d (%s)", r.code, r.stderr)
			}
			input := strings.Repeat("stdin line\n", 2000)
			r = kubectl(t, time.Minute, proto.env, input, "exec", "-i", "-n", ns, "sh", "--", "sh", "-c", "wc -c; exit 7")
			if r.code != 7 || strings.TrimSpace(r.stdout) != fmt.Sprint(len(input)) {
				t.Errorf("exec -i: exit %d stdout %q; want 7 and %d bytes counted", r.code, r.stdout, len(input))
			}
			r = kubectl(t, time.Minute, proto.env, "", "exec", "-n", ns, "sh", "--", "/no/such/binary")
			if r.code == 0 || !strings.Contains(r.stderr, "no such file or directory") {
				t.Errorf("missing binary: exit %d stderr %q", r.code, r.stderr)
			}
		})
	}
	r := kubectl(t, time.Minute, nil, "", "exec", "-n", ns, "sh", "-c", "nope", "--", "true")
	if r.code == 0 {
		t.Errorf("exec in a container the pod does not have succeeded")
	}
}

// inTerminal runs kubectl with a pseudo-terminal of the given size as its standard input and
// output (util-linux's script provides it), so that -t really negotiates a TTY.
func inTerminal(t *testing.T, env []string, rows, cols int, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("script (util-linux) is needed to give kubectl a terminal")
	}
	quoted := make([]string, 0, len(args)+3)
	for _, a := range append([]string{s.env["KUBECTL"], "--kubeconfig", s.env["KUBECONFIG"]}, args...) {
		quoted = append(quoted, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
	}
	shell := fmt.Sprintf("stty rows %d cols %d; %s", rows, cols, strings.Join(quoted, " "))
	ctx := ctxFor(t, time.Minute)
	cmd := exec.CommandContext(ctx, "script", "-qec", shell, "/dev/null")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %v in a terminal: %v\n%s", args, err, out)
	}
	return strings.ReplaceAll(string(out), "\r", "")
}

func TestStreamExecTTYAndResize(t *testing.T) {
	ns := newNamespace(t)
	runningPod(t, ns, basePod("sh", busybox("c", "sleep 3600")))
	for _, proto := range streamProtocols {
		t.Run(proto.name, func(t *testing.T) {
			// The terminal's size reaches the container through the resize stream, just after start.
			out := inTerminal(t, proto.env, 45, 123, "exec", "-it", "-n", ns, "sh", "--", "sh", "-c",
				`tty; for i in 1 2 3 4 5 6 7 8 9 10; do [ "$(stty size)" = "45 123" ] && break; sleep 0.2; done; stty size`)
			if !strings.Contains(out, "/dev/pts/") {
				t.Errorf("exec -t: no terminal in the container: %q", out)
			}
			if !strings.Contains(out, "45 123") {
				t.Errorf("exec -t: the terminal size did not reach the container: %q", out)
			}
		})
	}
}

func TestStreamAttach(t *testing.T) {
	ns := newNamespace(t)
	for _, proto := range streamProtocols {
		t.Run(proto.name, func(t *testing.T) {
			pod := basePod("attach-"+proto.name, busybox("c", `while read l; do echo "got $l"; done; echo bye`))
			pod.Spec.RestartPolicy = v1.RestartPolicyNever
			pod.Spec.Containers[0].Stdin, pod.Spec.Containers[0].StdinOnce = true, true
			runningPod(t, ns, pod)
			r := kubectl(t, time.Minute, proto.env, "a\nb\n", "attach", "-i", "-n", ns, pod.Name)
			if r.code != 0 || r.stdout != "got a\ngot b\nbye\n" {
				t.Errorf("attach -i: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
			}
			// Once its stdin closes, the container ends on its own.
			waitPod(t, ns, pod.Name, time.Minute, "Succeeded", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodSucceeded })
		})
	}
}

func TestStreamPortForward(t *testing.T) {
	ns := newNamespace(t)
	runningPod(t, ns, basePod("web", serverContainer("web")))
	for _, proto := range streamProtocols {
		t.Run(proto.name, func(t *testing.T) {
			ctx := ctxFor(t, time.Minute)
			cmd := exec.CommandContext(ctx, s.env["KUBECTL"], "--kubeconfig", s.env["KUBECONFIG"], "port-forward", "-n", ns, "pod/web", ":8080")
			cmd.Env = append(os.Environ(), proto.env...)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var errOut bytes.Buffer
			cmd.Stderr = &errOut
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
			sc := bufio.NewScanner(out)
			re := regexp.MustCompile(`^Forwarding from 127\.0\.0\.1:(\d+) -> 8080$`)
			var port string
			for port == "" && sc.Scan() {
				if m := re.FindStringSubmatch(sc.Text()); m != nil {
					port = m[1]
				}
			}
			if port == "" {
				t.Fatalf("kubectl port-forward did not start: %s", errOut.String())
			}
			go func() { _, _ = io.Copy(io.Discard, out) }()
			client := &http.Client{Timeout: 10 * time.Second}
			// Several requests, each a new stream over the same forwarding connection.
			for i := 0; i < 3; i++ {
				resp, err := client.Get("http://127.0.0.1:" + port + "/")
				if err != nil {
					t.Fatalf("GET through port-forward: %v\n%s", err, errOut.String())
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "hello from web") {
					t.Fatalf("GET through port-forward: %d %q", resp.StatusCode, body)
				}
			}
		})
	}
}

func TestStreamCopyBothWays(t *testing.T) {
	ns := newNamespace(t)
	runningPod(t, ns, basePod("files", busybox("c", "sleep 3600")))
	dir := t.TempDir()
	src := filepath.Join(dir, "in.bin")
	data := bytes.Repeat([]byte("vk-cri copies files through exec and tar\n"), 5000)
	if err := os.WriteFile(src, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, proto := range streamProtocols {
		t.Run(proto.name, func(t *testing.T) {
			remote := "/tmp/copied-" + proto.name
			mustKubectl(t, proto.env, "", "cp", "-n", ns, src, "files:"+remote)
			if got := mustKubectl(t, proto.env, "", "exec", "-n", ns, "files", "--", "wc", "-c", remote); !strings.HasPrefix(strings.TrimSpace(got), fmt.Sprint(len(data))) {
				t.Fatalf("copied file in the container: %q, want %d bytes", got, len(data))
			}
			back := filepath.Join(dir, "back-"+proto.name)
			mustKubectl(t, proto.env, "", "cp", "-n", ns, "files:"+remote, back)
			got, err := os.ReadFile(back)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, data) {
				t.Errorf("file copied back differs: %d bytes, want %d", len(got), len(data))
			}
		})
	}
}

// followLines runs kubectl logs -f on a container printing "line N ..." and returns a function
// that stops it and tells how many lines arrived, the last line's number, the first line out of
// order (a repeated or earlier number), if any, and how many times numbers were skipped.
func followLines(t *testing.T, ns, pod string) func() (lines, last int, disorder string, gaps int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	cmd := exec.CommandContext(ctx, s.env["KUBECTL"], "--kubeconfig", s.env["KUBECONFIG"], "logs", "-n", ns, pod, "-f", "--tail=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	type result struct {
		lines, last, gaps int
		disorder          string
	}
	done := make(chan result, 1)
	go func() {
		var r result
		r.last = -1
		br := bufio.NewReader(out)
		for {
			// A line cut short when kubectl is stopped has no newline: it does not count.
			text, err := br.ReadString('\n')
			if err != nil {
				break
			}
			var n int
			if _, err := fmt.Sscanf(text, "line %d", &n); err != nil {
				if r.disorder == "" {
					r.disorder = fmt.Sprintf("unexpected line %q", text)
				}
				continue
			}
			switch {
			case r.last >= 0 && n <= r.last && r.disorder == "":
				r.disorder = fmt.Sprintf("line %d after %d", n, r.last)
			case r.last >= 0 && n > r.last+1:
				r.gaps++
			}
			r.last = n
			r.lines++
		}
		done <- r
	}()
	return func() (int, int, string, int) {
		cancel()
		r := <-done
		_ = cmd.Wait()
		return r.lines, r.last, r.disorder, r.gaps
	}
}
