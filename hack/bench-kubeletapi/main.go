// Command bench-kubeletapi measures the kubelet API's data paths on the local stack: exec
// round-trip latency and port-forward throughput through the API server to a vk-cri node and to
// the reference kubelet node, next to the same operations made directly on each node's CRI
// runtime (what crictl exec and crictl port-forward do: ask the runtime for a streaming URL and
// stream to it). It prints a table; run it through hack/bench-kubeletapi.sh.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/transport/spdy"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-cri/vk-cri/cri"
)

type target struct {
	label       string // table column
	node        string
	criEndpoint string
}

type settings struct {
	kubeconfig string
	image      string
	execs      int
	blobMiB    int
	downloads  int
	targets    []target
}

func main() {
	var s settings
	var vkNode, refNode, vkCRI, refCRI string
	flag.StringVar(&s.kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "admin kubeconfig")
	flag.StringVar(&vkNode, "vk-node", "vk-bench", "vk-cri node")
	flag.StringVar(&vkCRI, "vk-cri-endpoint", os.Getenv("CRI_ENDPOINT"), "the vk-cri node's CRI runtime")
	flag.StringVar(&refNode, "ref-node", "ref", "reference kubelet node (empty: none)")
	flag.StringVar(&refCRI, "ref-cri-endpoint", os.Getenv("REF_CRI_ENDPOINT"), "the reference node's CRI runtime")
	flag.StringVar(&s.image, "image", os.Getenv("REGISTRY")+"/vk-cri/busybox:latest", "busybox image (sh, dd, httpd)")
	flag.IntVar(&s.execs, "execs", 50, "exec round trips per path")
	flag.IntVar(&s.blobMiB, "blob-mib", 64, "size of the file downloaded through port-forward")
	flag.IntVar(&s.downloads, "downloads", 3, "downloads per port-forward path")
	deadline := flag.Duration("deadline", 8*time.Minute, "give up after this")
	flag.Parse()
	s.targets = []target{{"vk-cri", vkNode, vkCRI}}
	if refNode != "" {
		s.targets = append(s.targets, target{"kubelet", refNode, refCRI})
	}
	ctx, cancel := context.WithTimeout(context.Background(), *deadline)
	defer cancel()
	if err := run(ctx, s); err != nil {
		fmt.Fprintln(os.Stderr, "bench-kubeletapi:", err)
		os.Exit(1)
	}
}

// result is one path's figures; err is set when the path failed (shown instead of figures).
type result struct {
	path      string
	latencies []time.Duration
	mibPerSec float64
	err       error
}

func run(ctx context.Context, s settings) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", s.kubeconfig)
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ns := "bench-kapi-" + rand.String(5)
	if _, err := client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	defer func() {
		_ = client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	}()
	if err := waitServiceAccount(ctx, client, ns); err != nil {
		return err
	}

	var execResults, pfResults []result
	for _, t := range s.targets {
		pod, err := startServer(ctx, client, ns, t.node, s)
		if err != nil {
			return fmt.Errorf("%s: %w", t.node, err)
		}
		execResults = append(execResults, measureExec("kubectl exec via API server → "+t.label, s.execs, func() error {
			return execViaAPIServer(ctx, cfg, client, pod)
		}))
		pfResults = append(pfResults, measurePortForward("port-forward via API server → "+t.label, s, func() (*portforward.PortForwarder, chan struct{}, error) {
			return forwardViaAPIServer(cfg, client, pod)
		}))
		rt, err := cri.Connect(ctx, t.criEndpoint, time.Minute)
		if err != nil {
			execResults = append(execResults, result{path: "CRI exec on " + t.label + "'s runtime", err: err})
			continue
		}
		containerID := strings.TrimPrefix(pod.Status.ContainerStatuses[0].ContainerID, "containerd://")
		execResults = append(execResults, measureExec("CRI exec (crictl exec) on "+t.label+"'s runtime", s.execs, func() error {
			return execViaRuntime(ctx, rt, containerID)
		}))
		sandboxID, err := sandboxOf(ctx, rt, string(pod.UID))
		if err != nil {
			pfResults = append(pfResults, result{path: "CRI port-forward on " + t.label + "'s runtime", err: err})
			continue
		}
		pfResults = append(pfResults, measurePortForward("CRI port-forward (crictl port-forward) on "+t.label+"'s runtime", s, func() (*portforward.PortForwarder, chan struct{}, error) {
			return forwardViaRuntime(ctx, rt, sandboxID)
		}))
	}
	printTable(s, execResults, pfResults)
	return nil
}

func waitServiceAccount(ctx context.Context, client kubernetes.Interface, ns string) error {
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := client.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
}

// startServer runs busybox httpd serving a blob of zeros on port 8080 on node.
func startServer(ctx context.Context, client kubernetes.Interface, ns, node string, s settings) (*v1.Pod, error) {
	no := false
	grace := int64(1)
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "server-" + node},
		Spec: v1.PodSpec{
			NodeSelector:                  map[string]string{v1.LabelHostname: node},
			AutomountServiceAccountToken:  &no,
			TerminationGracePeriodSeconds: &grace,
			Containers: []v1.Container{{
				Name:    "server",
				Image:   s.image,
				Command: []string{"sh", "-c", fmt.Sprintf("mkdir -p /www && dd if=/dev/zero of=/www/blob bs=1048576 count=%d 2>/dev/null && exec httpd -f -p 8080 -h /www", s.blobMiB)},
				Ports:   []v1.ContainerPort{{ContainerPort: 8080}},
			}},
		},
	}
	if _, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	var got *v1.Pod
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := client.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		got = p
		return p.Status.Phase == v1.PodRunning && len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].Ready, nil
	})
	if err != nil {
		return nil, fmt.Errorf("pod %s not running: %w", pod.Name, err)
	}
	return got, nil
}

func measureExec(path string, n int, call func() error) result {
	r := result{path: path}
	for i := 0; i < n; i++ {
		start := time.Now()
		if err := call(); err != nil {
			r.err = err
			return r
		}
		r.latencies = append(r.latencies, time.Since(start))
	}
	return r
}

// execViaAPIServer runs `true` in the pod as kubectl exec does: WebSocket, falling back to SPDY.
func execViaAPIServer(ctx context.Context, cfg *rest.Config, client kubernetes.Interface, pod *v1.Pod) error {
	req := client.CoreV1().RESTClient().Post().Resource("pods").Namespace(pod.Namespace).Name(pod.Name).SubResource("exec").
		VersionedParams(&v1.PodExecOptions{Container: pod.Spec.Containers[0].Name, Command: []string{"true"}, Stdout: true}, scheme.ParameterCodec)
	ws, err := remotecommand.NewWebSocketExecutor(cfg, "GET", req.URL().String())
	if err != nil {
		return err
	}
	sp, err := remotecommand.NewSPDYExecutor(cfg, "POST", req.URL())
	if err != nil {
		return err
	}
	exec, err := remotecommand.NewFallbackExecutor(ws, sp, httpstream.IsUpgradeFailure)
	if err != nil {
		return err
	}
	return exec.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: io.Discard})
}

// execViaRuntime does what crictl exec does: Exec for a streaming URL, then SPDY to it.
func execViaRuntime(ctx context.Context, rt *cri.Client, containerID string) error {
	resp, err := rt.Runtime.Exec(ctx, &runtimeapi.ExecRequest{ContainerId: containerID, Cmd: []string{"true"}, Stdout: true})
	if err != nil {
		return err
	}
	u, err := url.Parse(resp.Url)
	if err != nil {
		return err
	}
	exec, err := remotecommand.NewSPDYExecutor(&rest.Config{TLSClientConfig: rest.TLSClientConfig{Insecure: true}}, "POST", u)
	if err != nil {
		return err
	}
	return exec.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: io.Discard})
}

func sandboxOf(ctx context.Context, rt *cri.Client, uid string) (string, error) {
	sbs, err := rt.Runtime.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{
		LabelSelector: map[string]string{cri.PodUIDLabel: uid},
		State:         &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_READY},
	})
	if err != nil {
		return "", err
	}
	if len(sbs) == 0 {
		return "", fmt.Errorf("no ready sandbox for pod %s", uid)
	}
	return sbs[0].Id, nil
}

func forwardViaAPIServer(cfg *rest.Config, client kubernetes.Interface, pod *v1.Pod) (*portforward.PortForwarder, chan struct{}, error) {
	u := client.CoreV1().RESTClient().Post().Resource("pods").Namespace(pod.Namespace).Name(pod.Name).SubResource("portforward").URL()
	transport, upgrader, err := spdy.RoundTripperFor(cfg)
	if err != nil {
		return nil, nil, err
	}
	return newForwarder(spdy.NewDialer(upgrader, &http.Client{Transport: transport}, "POST", u))
}

func forwardViaRuntime(ctx context.Context, rt *cri.Client, sandboxID string) (*portforward.PortForwarder, chan struct{}, error) {
	resp, err := rt.Runtime.PortForward(ctx, &runtimeapi.PortForwardRequest{PodSandboxId: sandboxID, Port: []int32{8080}})
	if err != nil {
		return nil, nil, err
	}
	u, err := url.Parse(resp.Url)
	if err != nil {
		return nil, nil, err
	}
	transport, upgrader, err := spdy.RoundTripperFor(&rest.Config{})
	if err != nil {
		return nil, nil, err
	}
	return newForwarder(spdy.NewDialer(upgrader, &http.Client{Transport: transport}, "POST", u))
}

func newForwarder(dialer httpstream.Dialer) (*portforward.PortForwarder, chan struct{}, error) {
	stop, ready := make(chan struct{}), make(chan struct{})
	fw, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{"0:8080"}, stop, ready, io.Discard, io.Discard)
	if err != nil {
		return nil, nil, err
	}
	errc := make(chan error, 1)
	go func() { errc <- fw.ForwardPorts() }()
	select {
	case <-ready:
		return fw, stop, nil
	case err := <-errc:
		return nil, nil, fmt.Errorf("port-forward: %w", err)
	case <-time.After(30 * time.Second):
		close(stop)
		return nil, nil, fmt.Errorf("port-forward not ready after 30s")
	}
}

// measurePortForward downloads the blob through a fresh forwarder several times.
func measurePortForward(path string, s settings, open func() (*portforward.PortForwarder, chan struct{}, error)) result {
	r := result{path: path}
	fw, stop, err := open()
	if err != nil {
		r.err = err
		return r
	}
	defer close(stop)
	ports, err := fw.GetPorts()
	if err != nil || len(ports) != 1 {
		r.err = fmt.Errorf("forwarded ports: %v %v", ports, err)
		return r
	}
	client := &http.Client{Timeout: 5 * time.Minute}
	var total int64
	start := time.Now()
	for i := 0; i < s.downloads; i++ {
		resp, err := client.Get(fmt.Sprintf("http://127.0.0.1:%d/blob", ports[0].Local))
		if err != nil {
			r.err = err
			return r
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || n != int64(s.blobMiB)<<20 {
			r.err = fmt.Errorf("download: %d bytes, %v", n, err)
			return r
		}
		total += n
	}
	r.mibPerSec = float64(total) / (1 << 20) / time.Since(start).Seconds()
	return r
}

func percentile(d []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[int(p*float64(len(s)-1)+0.5)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

func printTable(s settings, execs, pfs []result) {
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "exec round trip (`true`, %d sequential)\tp50\tp90\tmax\n", s.execs)
	for _, r := range execs {
		if r.err != nil {
			fmt.Fprintf(w, "%s\tfailed: %s\t\t\n", r.path, short(r.err))
			continue
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", r.path, ms(percentile(r.latencies, .5)), ms(percentile(r.latencies, .9)), ms(percentile(r.latencies, 1)))
	}
	fmt.Fprintf(w, "\nport-forward throughput (HTTP GET of %d MiB × %d)\tMiB/s\t\t\n", s.blobMiB, s.downloads)
	for _, r := range pfs {
		if r.err != nil {
			fmt.Fprintf(w, "%s\tfailed: %s\t\t\n", r.path, short(r.err))
			continue
		}
		fmt.Fprintf(w, "%s\t%.0f\t\t\n", r.path, r.mibPerSec)
	}
	_ = w.Flush()
}

// short keeps the end of an error, where the cause is, to fit the table.
func short(err error) string {
	msg := err.Error()
	if len(msg) > 70 {
		msg = "…" + msg[len(msg)-69:]
	}
	return msg
}
