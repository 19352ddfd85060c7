//go:build e2e

// Package e2e runs vk-cri against the real local stack: containerd, etcd, kube-apiserver,
// kube-controller-manager and kube-scheduler, all started by hack/stack-up.sh.
package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-cri/vk-cri/cri"
	"github.com/vk-cri/vk-cri/internal/stackenv"
)

// refNode is the reference kubelet's node (hack/ref.sh).
const refNode = "ref"

// The node the tests start, overridable so that several runs of parts of the suite can share
// one stack (each with its own node; see hack/e2e.sh).
var (
	nodeName = envOr("VKCRI_E2E_NODE", "vk-e2e")
	nodePort = envOr("VKCRI_E2E_PORT", "10260")
)

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// suite is what every test shares: the stack's settings and clients. Set once by TestMain.
type suite struct {
	env     map[string]string
	kube    kubernetes.Interface
	runtime *cri.Client
	repo    string
}

var s suite

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	env, err := stackenv.Load(os.Getenv("VKCRI_STACK_ENV"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v (run hack/stack-up.sh, or make test-e2e)\n", err)
		return 1
	}
	s.env = env
	s.repo, _ = filepath.Abs("../..")
	cfg, err := clientcmd.BuildConfigFromFlags("", env["KUBECONFIG"])
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: admin kubeconfig:", err)
		return 1
	}
	s.kube = kubernetes.NewForConfigOrDie(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if s.runtime, err = cri.Connect(ctx, env["CRI_ENDPOINT"], 30*time.Second); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	// A node left over from an interrupted run would confuse the tests.
	_ = node("remove")
	if err := node("start"); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: starting vk-cri:", err)
		return 1
	}
	if err := node("wait-ready"); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: vk-cri node not ready:", err)
		dumpNodeLog()
		return 1
	}
	code := m.Run()
	if code != 0 {
		dumpNodeLog()
	}
	if err := node("remove"); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: removing node:", err)
	}
	return code
}

// node runs hack/node.sh for the e2e node with its usual flags.
func node(cmd string) error { return nodeWithArgs(cmd, "") }

// nodeWithArgs runs hack/node.sh for the e2e node with its usual flags and extra ones.
func nodeWithArgs(cmd, extraArgs string) error {
	c := exec.Command(nodeScript(), cmd, nodeName, nodePort)
	// A small log rotation size and a short monitor interval let the logs tests see rotations.
	extra := strings.TrimSpace(os.Getenv("VKCRI_EXTRA_ARGS") + " --container-log-max-size=64Ki --container-log-max-files=3 --container-log-monitor-interval=3s " + extraArgs)
	c.Env = append(os.Environ(), "TIMEOUT=90", "VKCRI_EXTRA_ARGS="+extra)
	out, err := c.CombinedOutput()
	if err != nil {
		return fmt.Errorf("hack/node.sh %s: %w\n%s", cmd, err, out)
	}
	return nil
}

// nodeScript is the script that runs the e2e node: hack/node.sh on this machine, or another with
// its commands (VKCRI_E2E_NODE_SH, relative to the repository: hack/vm/node.sh runs it in the VM
// lane's guest).
func nodeScript() string {
	return filepath.Join(s.repo, envOr("VKCRI_E2E_NODE_SH", "hack/node.sh"))
}

// onNode runs a shell script on the e2e node's machine and returns its output: through
// VKCRI_E2E_NODE_EXEC (a command relative to the repository that takes the script as its
// arguments, such as "hack/vm/vm.sh ssh") when the node runs elsewhere, else locally.
func onNode(t *testing.T, script string) string {
	t.Helper()
	var c *exec.Cmd
	if prefix := strings.Fields(os.Getenv("VKCRI_E2E_NODE_EXEC")); len(prefix) > 0 {
		c = exec.Command(filepath.Join(s.repo, prefix[0]), append(prefix[1:], script)...)
	} else {
		c = exec.Command("sh", "-c", script)
	}
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("on the node: %s: %v\n%s", script, err, out)
	}
	return strings.TrimSpace(string(out))
}

// stopNode stops the test node's vk-cri: how is "stop" (SIGTERM, a clean shutdown) or "kill"
// (SIGKILL, a crash).
func stopNode(t *testing.T, how string) {
	t.Helper()
	if err := node(how); err != nil {
		t.Fatal(err)
	}
}

// startNode starts the test node's vk-cri with its usual flags and extraArgs (later tests, log
// rotation among them, rely on the usual ones) and waits until the node is Ready.
func startNode(t *testing.T, extraArgs string) {
	t.Helper()
	if err := nodeWithArgs("start", extraArgs); err != nil {
		t.Fatalf("starting %s with %q: %v", nodeName, extraArgs, err)
	}
	if err := node("wait-ready"); err != nil {
		t.Fatal(err)
	}
}

// restartNode stops the test node cleanly and starts it with extra vk-cri flags (none: its
// usual flags).
func restartNode(t *testing.T, extraArgs string) {
	t.Helper()
	stopNode(t, "stop")
	startNode(t, extraArgs)
}

// stackScript runs a hack/ script with arguments.
func stackScript(t *testing.T, script string, args ...string) {
	t.Helper()
	c := exec.Command(filepath.Join(s.repo, "hack", script), args...)
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("hack/%s %v: %v\n%s", script, args, err, out)
	}
}

func dumpNodeLog() {
	path := filepath.Join(s.env["STACK_DIR"], "logs", "vk-cri-"+nodeName+".log")
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) > 80 {
		lines = lines[len(lines)-80:]
	}
	fmt.Fprintf(os.Stderr, "---- last lines of %s ----\n%s\n", path, strings.Join(lines, "\n"))
}

// onCRIO: the node runs on CRI-O (CONTAINER_RUNTIME=crio in its env: hack/crio.sh env, or a stack
// brought up with VKCRI_RUNTIME=crio); else on the stack's containerd.
func onCRIO() bool { return s.env["CONTAINER_RUNTIME"] == "crio" }

// containerIDPrefix is the scheme of the node's container IDs: the runtime's name as its Version
// RPC gives it (kubecontainer.ContainerID).
func containerIDPrefix() string {
	if onCRIO() {
		return "cri-o://"
	}
	return "containerd://"
}

func image(name string) string {
	return s.env["REGISTRY"] + "/vk-cri/" + name
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// newNamespace creates a namespace for one test and deletes it afterwards.
func newNamespace(t *testing.T) string {
	t.Helper()
	ctx := ctxFor(t, time.Minute)
	name := "e2e-" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))
	if len(name) > 50 {
		name = name[:50]
	}
	name = strings.TrimRight(name, "-") + "-" + rand.String(5)
	_, err := s.kube.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	t.Cleanup(func() {
		_ = s.kube.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	// Pods are admitted only once the namespace's default ServiceAccount exists.
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := s.kube.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("default service account in %s: %v", name, err)
	}
	return name
}

// busybox runs a shell script in the busybox image.
func busybox(name, script string) v1.Container {
	return v1.Container{Name: name, Image: image("busybox:latest"), Command: []string{"sh", "-c", script}}
}

// basePod is a pod for the e2e node: scheduled by kube-scheduler through a node selector.
func basePod(name string, containers ...v1.Container) *v1.Pod {
	no := false
	grace := int64(5)
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PodSpec{
			NodeSelector:                  map[string]string{v1.LabelHostname: nodeName},
			AutomountServiceAccountToken:  &no,
			TerminationGracePeriodSeconds: &grace,
			Containers:                    containers,
		},
	}
}

func createPod(t *testing.T, ns string, pod *v1.Pod) *v1.Pod {
	t.Helper()
	got, err := s.kube.CoreV1().Pods(ns).Create(ctxFor(t, 30*time.Second), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating pod %s: %v", pod.Name, err)
	}
	return got
}

// waitPod polls the pod until cond holds, failing the test at the deadline with the last state.
func waitPod(t *testing.T, ns, name string, timeout time.Duration, what string, cond func(*v1.Pod) bool) *v1.Pod {
	t.Helper()
	var last *v1.Pod
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		p, err := s.kube.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = p
		return cond(p), nil
	})
	if err != nil {
		t.Fatalf("pod %s/%s: waiting for %s: %v\nlast status: %s", ns, name, what, err, describeStatus(last))
	}
	return last
}

func waitPodGone(t *testing.T, ns, name string, timeout time.Duration) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		_, err := s.kube.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("pod %s/%s still in the API after %v", ns, name, timeout)
	}
}

func describeStatus(p *v1.Pod) string {
	if p == nil {
		return "<never seen>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "phase=%s node=%s ip=%s", p.Status.Phase, p.Spec.NodeName, p.Status.PodIP)
	for _, c := range p.Status.Conditions {
		fmt.Fprintf(&b, " %s=%s", c.Type, c.Status)
	}
	for _, group := range []struct {
		kind     string
		statuses []v1.ContainerStatus
	}{{"init ", p.Status.InitContainerStatuses}, {"", p.Status.ContainerStatuses}, {"ephemeral ", p.Status.EphemeralContainerStatuses}} {
		for _, c := range group.statuses {
			fmt.Fprintf(&b, "\n  %s%s: restarts=%d ready=%v %s", group.kind, c.Name, c.RestartCount, c.Ready, stateString(c.State))
		}
	}
	return b.String()
}

func stateString(st v1.ContainerState) string {
	switch {
	case st.Running != nil:
		return "running"
	case st.Terminated != nil:
		return fmt.Sprintf("terminated(%d %s)", st.Terminated.ExitCode, st.Terminated.Reason)
	case st.Waiting != nil:
		return fmt.Sprintf("waiting(%s: %s)", st.Waiting.Reason, st.Waiting.Message)
	}
	return "unknown"
}

func isRunningReady(p *v1.Pod) bool {
	if p.Status.Phase != v1.PodRunning {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

// runtimeObjects lists the sandboxes and containers the runtime holds for a pod UID.
func runtimeObjects(t *testing.T, uid string) ([]*runtimeapi.PodSandbox, []*runtimeapi.Container) {
	t.Helper()
	ctx := ctxFor(t, 30*time.Second)
	sel := map[string]string{cri.PodUIDLabel: uid}
	sbs, err := s.runtime.Runtime.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: sel})
	if err != nil {
		t.Fatalf("listing sandboxes: %v", err)
	}
	cs, err := s.runtime.Runtime.ListContainers(ctx, &runtimeapi.ContainerFilter{LabelSelector: sel})
	if err != nil {
		t.Fatalf("listing containers: %v", err)
	}
	return sbs, cs
}

func containerIDs(p *v1.Pod) map[string]string {
	ids := map[string]string{}
	for _, c := range p.Status.ContainerStatuses {
		ids[c.Name] = c.ContainerID
	}
	return ids
}
