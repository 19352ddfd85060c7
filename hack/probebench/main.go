// Command probebench measures how punctually a node runs its probes: --pods pods, each with a
// startup, a readiness and a liveness httpGet probe at a 1 s period, aimed at an HTTP server
// this program runs on the node's IP. The server timestamps every probe request; once every pod
// is Ready it watches for --window and prints, over that window:
//
//   - probe scheduling lag: for each probe, the interval between two consecutive requests minus
//     the period (how late each run came), p50 / p99 / max over all probes;
//   - probes per second received, against the pods × 2 expected (startup probes stop at start);
//   - the agent's CPU (utime+stime over the window, as a share of one core) and RSS at the end.
//
// It prints figures and asserts nothing. Everything it creates lives in one namespace, deleted
// at the end.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/vk-cri/vk-cri/internal/procstat"
	"github.com/vk-cri/vk-cri/internal/stackenv"
)

type options struct {
	env, node, pidFile, image string
	pods                      int
	period, window            time.Duration
}

func main() {
	var o options
	flag.StringVar(&o.env, "stack-env", "/var/run/vk-cri-stack/env", "the local stack's settings")
	flag.StringVar(&o.node, "node", "vk-probe-bench", "node to run the pods on")
	flag.StringVar(&o.pidFile, "pid-file", "", "PID file of the node's agent (default $STACK_DIR/vk-cri-<node>.pid)")
	flag.StringVar(&o.image, "image", "", "container image (default $REGISTRY/vk-cri/busybox:latest)")
	flag.IntVar(&o.pods, "pods", 100, "pods, each with a startup, a readiness and a liveness probe")
	flag.DurationVar(&o.period, "period", time.Second, "probe period")
	flag.DurationVar(&o.window, "window", 60*time.Second, "how long probes are measured once every pod is Ready")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "probebench:", err)
		os.Exit(1)
	}
}

// recorder timestamps the probe requests per path.
type recorder struct {
	mu    sync.Mutex
	on    bool
	times map[string][]time.Time
	total int
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	now := time.Now()
	r.mu.Lock()
	if r.on {
		r.times[req.URL.Path] = append(r.times[req.URL.Path], now)
		r.total++
	}
	r.mu.Unlock()
	_, _ = w.Write([]byte("ok\n"))
}

func (r *recorder) record(on bool) {
	r.mu.Lock()
	r.on = on
	r.mu.Unlock()
}

func run(o options) error {
	env, err := stackenv.Load(o.env)
	if err != nil {
		return err
	}
	if o.image == "" {
		o.image = env["REGISTRY"] + "/vk-cri/busybox:latest"
	}
	if o.pidFile == "" {
		o.pidFile = filepath.Join(env["STACK_DIR"], "vk-cri-"+o.node+".pid")
	}
	pid, _, err := procstat.AgentPID(o.pidFile)
	if err != nil {
		return fmt.Errorf("agent of node %s: %w", o.node, err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", env["KUBECONFIG"])
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 50, 100
	kube := kubernetes.NewForConfigOrDie(cfg)

	l, err := net.Listen("tcp", net.JoinHostPort(env["NODE_IP"], "0"))
	if err != nil {
		return err
	}
	rec := &recorder{times: map[string][]time.Time{}}
	srv := &http.Server{Handler: rec, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	defer srv.Close()
	port := l.Addr().(*net.TCPAddr).Port

	ctx := context.Background()
	ns := fmt.Sprintf("probebench-%d", time.Now().Unix())
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	defer func() {
		_ = kube.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
		fmt.Printf("namespace %s deleted\n", ns)
	}()
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := kube.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	}); err != nil {
		return fmt.Errorf("default service account: %w", err)
	}

	start := time.Now()
	for i := 0; i < o.pods; i++ {
		if _, err := kube.CoreV1().Pods(ns).Create(ctx, benchPod(o, i, env["NODE_IP"], port), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating pod %d: %w", i, err)
		}
	}
	if err := wait.PollUntilContextTimeout(ctx, time.Second, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		ready := 0
		for i := range pods.Items {
			for _, c := range pods.Items[i].Status.Conditions {
				if c.Type == v1.PodReady && c.Status == v1.ConditionTrue {
					ready++
				}
			}
		}
		return ready == o.pods, nil
	}); err != nil {
		return fmt.Errorf("waiting for %d pods to be Ready: %w", o.pods, err)
	}
	fmt.Printf("%d pods Ready in %v on node %s; measuring probes for %v\n", o.pods, time.Since(start).Round(time.Second), o.node, o.window)

	cpu0, err := procstat.CPUSeconds(pid)
	if err != nil {
		return err
	}
	rec.record(true)
	t0 := time.Now()
	time.Sleep(o.window)
	rec.record(false)
	elapsed := time.Since(t0)
	cpu1, err := procstat.CPUSeconds(pid)
	if err != nil {
		return err
	}
	rss, _ := procstat.RSSKiB(pid)

	rec.mu.Lock()
	defer rec.mu.Unlock()
	var lags []time.Duration
	for _, ts := range rec.times {
		for i := 1; i < len(ts); i++ {
			lags = append(lags, ts[i].Sub(ts[i-1])-o.period)
		}
	}
	sort.Slice(lags, func(i, j int) bool { return lags[i] < lags[j] })
	pct := func(p float64) time.Duration {
		if len(lags) == 0 {
			return 0
		}
		return lags[min(len(lags)-1, int(p*float64(len(lags))))]
	}
	expected := float64(o.pods*2) / o.period.Seconds()
	var b strings.Builder
	fmt.Fprintf(&b, "probe scheduling lag (interval between runs of one probe − period %v), %d intervals:\n", o.period, len(lags))
	fmt.Fprintf(&b, "  p50 %v  p99 %v  max %v  min %v\n", pct(0.50).Round(time.Millisecond), pct(0.99).Round(time.Millisecond), pct(1).Round(time.Millisecond), pct(0).Round(time.Millisecond))
	fmt.Fprintf(&b, "probes received: %.1f/s (expected %.0f/s: %d pods × readiness + liveness)\n", float64(rec.total)/elapsed.Seconds(), expected, o.pods)
	fmt.Fprintf(&b, "agent (pid %d) CPU over %v: %.1f%% of one core; RSS %.0f MiB\n", pid, elapsed.Round(time.Second), 100*(cpu1-cpu0)/elapsed.Seconds(), rss/1024)
	fmt.Print(b.String())
	return nil
}

func benchPod(o options, i int, host string, port int) *v1.Pod {
	no := false
	grace := int64(1)
	probe := func(kind string) *v1.Probe {
		return &v1.Probe{
			ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{
				Host: host, Port: intstr.FromInt32(int32(port)), Path: fmt.Sprintf("/p%d/%s", i, kind),
			}},
			PeriodSeconds: int32(o.period.Seconds()), TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 3,
		}
	}
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i)},
		Spec: v1.PodSpec{
			NodeName:                      o.node,
			AutomountServiceAccountToken:  &no,
			TerminationGracePeriodSeconds: &grace,
			Containers: []v1.Container{{
				Name: "c", Image: o.image, ImagePullPolicy: v1.PullIfNotPresent,
				Command:        []string{"sleep", "3600"},
				StartupProbe:   probe("startup"),
				ReadinessProbe: probe("ready"),
				LivenessProbe:  probe("live"),
			}},
		},
	}
}
