// Command bench measures a vk-cri node next to the reference upstream kubelet node on the local
// stack (same machine, containerd instances with the same settings), and the runtime floor: the
// same sandbox and container work done directly on CRI. It prints figures, never asserts them.
//
// For each node (vk-cri node --vk-node, kubelet node --ref-node; a node that is not Ready is
// skipped with a note), in a namespace of its own:
//
//  1. pod startup latency of a burst of --burst pods created at once, pinned with spec.nodeName:
//     creation → Running and creation → Ready, as received through a WATCH (client timestamps);
//  2. status propagation: a vktest "serve" pod (restartPolicy Never) is told to exit with
//     GET http://<podIP>:8080/exit?code=1 at T0; T1 is when the watch delivers phase Failed;
//  3. deletion latency of the burst pods: delete call (grace 5 s) → DELETED event;
//  4. the agent's RSS (VmRSS) and CPU (utime+stime) over --window, idle, with the burst pods, and
//     with --load pods.
//
// Then the runtime floor on --floor-endpoint (the vk containerd by default): RunPodSandbox +
// CreateContainer + StartContainer of the vktest image, sequentially then --floor at once.
//
// Everything it creates (namespaces labelled vk-cri-bench, sandboxes labelled io.vk-cri.bench) is
// removed at the end, on failure and on SIGINT/SIGTERM; --cleanup-only removes leftovers of a
// killed run.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	goruntime "runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	watchtools "k8s.io/client-go/tools/watch"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-cri/vk-cri/cri"
	"github.com/vk-cri/vk-cri/internal/procstat"
	"github.com/vk-cri/vk-cri/internal/stackenv"
)

const (
	// nsLabel marks the namespaces this tool creates; its value is the run ID.
	nsLabel = "vk-cri-bench"
	// floorLabel marks the sandboxes and containers of the runtime floor; its value is the run ID.
	// It is not io.vk-cri.node, so no vk-cri node ever lists (adopts or deletes) them.
	floorLabel = "io.vk-cri.bench"
	// floorCgroupRoot is the cgroupfs parent of the floor's sandboxes (vk-cri's layout below it).
	floorCgroupRoot = "/vk-bench-floor"
	gracePeriod     = int64(5)
	containerName   = "app"
	httpPort        = 8080
)

// ---------------------------------------------------------------------------------------------
// Options.

type options struct {
	envFile       string
	vkNode        string
	refNode       string
	vkPIDFile     string
	refPIDFile    string
	image         string
	burst         int
	statusTrials  int
	load          int
	window        time.Duration
	floor         int
	floorSeq      int
	floorEndpoint string
	deadline      time.Duration
	out           string
	skipFloor     bool
	cleanupOnly   bool
}

func parseOptions() options {
	var o options
	defEnv := os.Getenv("VKCRI_STACK_ENV")
	if defEnv == "" {
		defEnv = "/var/run/vk-cri-stack/env"
	}
	flag.StringVar(&o.envFile, "env", defEnv, "stack env file written by hack/stack-up.sh")
	flag.StringVar(&o.vkNode, "vk-node", "vk-bench", "vk-cri node to measure (empty: none)")
	flag.StringVar(&o.refNode, "ref-node", "ref", "reference kubelet node to measure (empty: none)")
	flag.StringVar(&o.vkPIDFile, "vk-pidfile", "", "PID file of the vk-cri agent (default $STACK_DIR/vk-cri-<vk-node>.pid)")
	flag.StringVar(&o.refPIDFile, "ref-pidfile", "", "PID file of the kubelet (default $STACK_DIR/kubelet-<ref-node>.pid)")
	flag.StringVar(&o.image, "image", "", "test image (default $REGISTRY/vk-cri/vktest:latest)")
	flag.IntVar(&o.burst, "burst", 30, "pods created at once for the startup and deletion latencies")
	flag.IntVar(&o.statusTrials, "status-trials", 20, "container exits for the status propagation latency")
	flag.IntVar(&o.load, "load", 100, "pods running for the loaded RSS/CPU measurement (0: skip)")
	flag.DurationVar(&o.window, "window", 20*time.Second, "RSS/CPU measurement window")
	flag.IntVar(&o.floor, "floor", 30, "sandboxes started at once for the runtime floor")
	flag.IntVar(&o.floorSeq, "floor-seq", 5, "sandboxes started one after the other for the runtime floor")
	flag.StringVar(&o.floorEndpoint, "floor-endpoint", "", "CRI endpoint of the runtime floor (default the vk instance, $CRI_ENDPOINT)")
	flag.DurationVar(&o.deadline, "deadline", 12*time.Minute, "the measurements stop at this deadline (clean-up comes after)")
	flag.StringVar(&o.out, "out", "", "write the results as JSON to this file")
	flag.BoolVar(&o.skipFloor, "skip-floor", false, "do not measure the runtime floor")
	flag.BoolVar(&o.cleanupOnly, "cleanup-only", false, "only remove what earlier runs left behind (namespaces, floor sandboxes)")
	flag.Parse()
	return o
}

func logf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "[%s] bench: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, a...))
}

// ---------------------------------------------------------------------------------------------
// Results.

// Window is the agent's resource use over one measurement window.
type Window struct {
	Pods        int     `json:"pods"`
	Seconds     float64 `json:"seconds"`
	RSSMeanMiB  float64 `json:"rss_mean_mib"`
	RSSMaxMiB   float64 `json:"rss_max_mib"`
	CPUSeconds  float64 `json:"cpu_seconds"`
	CPUPercent  float64 `json:"cpu_percent_of_one_core"`
	RSSSamples  int     `json:"rss_samples"`
	Unavailable string  `json:"unavailable,omitempty"`
}

// NodeResult holds one node's raw samples (milliseconds) and windows.
type NodeResult struct {
	Role      string `json:"role"`
	Node      string `json:"node"`
	Skipped   string `json:"skipped,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	AgentPID  int    `json:"agent_pid,omitempty"`
	AgentComm string `json:"agent_comm,omitempty"`

	StartupRunningMs  []float64          `json:"startup_running_ms"`
	StartupReadyMs    []float64          `json:"startup_ready_ms"`
	BurstAllRunningMs *float64           `json:"burst_first_create_to_last_running_ms,omitempty"`
	BurstAgentCPUSec  *float64           `json:"burst_agent_cpu_seconds,omitempty"`
	StatusMs          []float64          `json:"status_exit_to_failed_ms"`
	DeleteMs          []float64          `json:"delete_ms"`
	LoadAllRunningMs  *float64           `json:"load_first_create_to_last_running_ms,omitempty"`
	LoadDeleteMs      []float64          `json:"load_delete_ms"`
	Windows           map[string]*Window `json:"windows"`
	// Context of the measurement on a shared machine: pods of other users bound to the same node,
	// and the host's load average, at the start and at the end.
	OtherPods       [2]int    `json:"other_pods_on_node_start_end"`
	LoadAvg         [2]string `json:"loadavg_start_end"`
	Notes           []string  `json:"notes,omitempty"`
	DurationSeconds float64   `json:"duration_seconds"`
}

func (r *NodeResult) note(format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	logf("%s: %s", r.Node, msg)
	r.Notes = append(r.Notes, msg)
}

// FloorResult is the runtime floor: CRI calls made directly, no agent.
type FloorResult struct {
	Endpoint string `json:"endpoint"`
	Image    string `json:"image"`
	// Sequential: one sandbox after the other; per step and total, per sandbox.
	SeqRunPodSandboxMs []float64 `json:"seq_run_pod_sandbox_ms"`
	SeqCreateMs        []float64 `json:"seq_create_container_ms"`
	SeqStartMs         []float64 `json:"seq_start_container_ms"`
	SeqTotalMs         []float64 `json:"seq_total_ms"`
	// Concurrent: N goroutines released at once; per sandbox from the common start to its
	// StartContainer returning, and the time until the last one returned.
	ConcN          int       `json:"concurrent_n"`
	ConcPerPodMs   []float64 `json:"concurrent_per_pod_ms"`
	ConcAllMs      float64   `json:"concurrent_all_started_ms"`
	ConcTeardownMs float64   `json:"concurrent_stop_remove_all_ms"`
	Errors         []string  `json:"errors,omitempty"`
}

// Row is one line of the table.
type Row struct {
	Metric  string   `json:"metric"`
	Unit    string   `json:"unit"`
	VKCRI   *float64 `json:"vk_cri"`
	Kubelet *float64 `json:"kubelet"`
	Ratio   *float64 `json:"ratio_vk_cri_over_kubelet"`
}

// Result is the whole run, written by --out.
type Result struct {
	RunID           string        `json:"run_id"`
	Started         time.Time     `json:"started"`
	DurationSeconds float64       `json:"duration_seconds"`
	Host            string        `json:"host"`
	CPUs            int           `json:"cpus"`
	Image           string        `json:"image"`
	Nodes           []*NodeResult `json:"nodes"`
	Table           []Row         `json:"table"`
	Floor           *FloorResult  `json:"runtime_floor,omitempty"`
	Notes           []string      `json:"notes"`
}

// ---------------------------------------------------------------------------------------------
// Watch tracker: every pod event of one namespace, with the client's receive time.

type podRec struct {
	createSent time.Time
	created    time.Time // the Create call returned
	added      time.Time // first event seen
	running    time.Time
	ready      time.Time
	failed     time.Time
	deleteSent time.Time
	deleted    time.Time
	ip         string
}

// t0 is the pod's creation as the client knows it: the earlier of the Create call returning and
// its first watch event.
func (r *podRec) t0() time.Time {
	switch {
	case r.created.IsZero():
		return r.added
	case r.added.IsZero() || r.created.Before(r.added):
		return r.created
	}
	return r.added
}

type tracker struct {
	mu      sync.Mutex
	pods    map[string]*podRec
	changed chan struct{}
}

func newTracker() *tracker {
	return &tracker{pods: map[string]*podRec{}, changed: make(chan struct{})}
}

// rec returns the record of a pod, creating it; the caller holds t.mu.
func (t *tracker) rec(name string) *podRec {
	r := t.pods[name]
	if r == nil {
		r = &podRec{}
		t.pods[name] = r
	}
	return r
}

func (t *tracker) update(name string, f func(r *podRec)) {
	t.mu.Lock()
	f(t.rec(name))
	t.mu.Unlock()
}

func (t *tracker) get(name string) podRec {
	t.mu.Lock()
	defer t.mu.Unlock()
	return *t.rec(name)
}

func (t *tracker) observe(typ watch.EventType, pod *v1.Pod, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.rec(pod.Name)
	if r.added.IsZero() {
		r.added = now
	}
	if typ == watch.Deleted && r.deleted.IsZero() {
		r.deleted = now
	}
	if pod.Status.PodIP != "" {
		r.ip = pod.Status.PodIP
	}
	switch pod.Status.Phase {
	case v1.PodRunning:
		if r.running.IsZero() {
			r.running = now
		}
	case v1.PodFailed:
		if r.failed.IsZero() {
			r.failed = now
		}
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.PodReady && c.Status == v1.ConditionTrue && r.ready.IsZero() {
			r.ready = now
		}
	}
	close(t.changed)
	t.changed = make(chan struct{})
}

// wait returns true once cond (called with t.mu held) holds, false at the timeout or when ctx ends.
func (t *tracker) wait(ctx context.Context, timeout time.Duration, cond func(pods map[string]*podRec) bool) bool {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		t.mu.Lock()
		ok := cond(t.pods)
		ch := t.changed
		t.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-ch:
		case <-timer.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// count returns how many of names satisfy f; the caller holds t.mu (inside wait's cond).
func count(pods map[string]*podRec, names []string, f func(r *podRec) bool) int {
	n := 0
	for _, name := range names {
		if r := pods[name]; r != nil && f(r) {
			n++
		}
	}
	return n
}

func (t *tracker) countNow(names []string, f func(r *podRec) bool) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return count(t.pods, names, f)
}

// run watches the namespace's pods until ctx ends, restarting the watch if it breaks.
func (t *tracker) run(ctx context.Context, kube kubernetes.Interface, ns string, ready chan<- error) {
	first := true
	for ctx.Err() == nil {
		list, err := kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			if first {
				ready <- err
				return
			}
			time.Sleep(time.Second)
			continue
		}
		now := time.Now()
		for i := range list.Items {
			// Only after a broken watch: the state is recorded late, never early.
			t.observe(watch.Modified, &list.Items[i], now)
		}
		lw := &cache.ListWatch{WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return kube.CoreV1().Pods(ns).Watch(ctx, opts)
		}}
		rw, err := watchtools.NewRetryWatcherWithContext(ctx, list.ResourceVersion, lw)
		if err != nil {
			if first {
				ready <- err
				return
			}
			continue
		}
		if first {
			ready <- nil
			first = false
		}
	events:
		for {
			select {
			case <-ctx.Done():
				rw.Stop()
				return
			case ev, ok := <-rw.ResultChan():
				now := time.Now()
				if !ok {
					break events
				}
				if pod, isPod := ev.Object.(*v1.Pod); isPod && ev.Type != watch.Bookmark {
					t.observe(ev.Type, pod, now)
				}
			}
		}
		rw.Stop()
		logf("watch on %s ended; listing and watching again", ns)
	}
}

// ---------------------------------------------------------------------------------------------
// Agent process: RSS and CPU from /proc.

// measureWindow samples RSS every 500 ms and CPU at both ends of a window of length d.
func measureWindow(ctx context.Context, pid, pods int, d time.Duration) *Window {
	w := &Window{Pods: pods}
	if pid == 0 {
		w.Unavailable = "agent PID unknown"
		return w
	}
	cpu0, err := procstat.CPUSeconds(pid)
	if err != nil {
		w.Unavailable = err.Error()
		return w
	}
	start := time.Now()
	var sum float64
	sample := func() {
		if kib, err := procstat.RSSKiB(pid); err == nil {
			mib := kib / 1024
			sum += mib
			w.RSSSamples++
			w.RSSMaxMiB = math.Max(w.RSSMaxMiB, mib)
		}
	}
	sample()
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	end := time.NewTimer(d)
	defer end.Stop()
loop:
	for {
		select {
		case <-tick.C:
			sample()
		case <-end.C:
			break loop
		case <-ctx.Done():
			break loop
		}
	}
	cpu1, err := procstat.CPUSeconds(pid)
	if err != nil {
		w.Unavailable = err.Error()
		return w
	}
	sample()
	w.Seconds = time.Since(start).Seconds()
	w.CPUSeconds = cpu1 - cpu0
	w.CPUPercent = 100 * w.CPUSeconds / w.Seconds
	if w.RSSSamples > 0 {
		w.RSSMeanMiB = sum / float64(w.RSSSamples)
	}
	return w
}

// ---------------------------------------------------------------------------------------------
// One node.

type nodeBench struct {
	o      options
	kube   kubernetes.Interface
	image  string
	res    *NodeResult
	ns     string
	tr     *tracker
	pid    int
	runID  string
	cancel context.CancelFunc // stops the watch
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func nodeReady(ctx context.Context, kube kubernetes.Interface, name string) (bool, string) {
	n, err := kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false, fmt.Sprintf("node %s: %v", name, err)
	}
	for _, c := range n.Status.Conditions {
		if c.Type == v1.NodeReady {
			if c.Status == v1.ConditionTrue {
				return true, ""
			}
			return false, fmt.Sprintf("node %s is not Ready (%s: %s)", name, c.Reason, c.Message)
		}
	}
	return false, fmt.Sprintf("node %s has no Ready condition", name)
}

func (b *nodeBench) pod(name string, restart v1.RestartPolicy) *v1.Pod {
	no := false
	grace := gracePeriod
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{nsLabel: b.runID}},
		Spec: v1.PodSpec{
			NodeName:                      b.res.Node,
			AutomountServiceAccountToken:  &no,
			TerminationGracePeriodSeconds: &grace,
			RestartPolicy:                 restart,
			Containers: []v1.Container{{
				Name:            containerName,
				Image:           b.image,
				Args:            []string{"serve", "--port", strconv.Itoa(httpPort)},
				ImagePullPolicy: v1.PullIfNotPresent,
			}},
		},
	}
}

// createAll creates the pods at once (one goroutine each) and returns the names created.
func (b *nodeBench) createAll(ctx context.Context, pods []*v1.Pod) []string {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var names []string
	var errs []string
	release := make(chan struct{})
	for _, p := range pods {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-release
			b.tr.update(p.Name, func(r *podRec) { r.createSent = time.Now() })
			_, err := b.kube.CoreV1().Pods(b.ns).Create(ctx, p, metav1.CreateOptions{})
			now := time.Now()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Sprintf("%s: %v", p.Name, err))
				return
			}
			b.tr.update(p.Name, func(r *podRec) { r.created = now })
			names = append(names, p.Name)
		}()
	}
	close(release)
	wg.Wait()
	if len(errs) > 0 {
		b.res.note("%d pod creations failed, first: %s", len(errs), errs[0])
	}
	sort.Strings(names)
	return names
}

// deleteAll deletes the pods at once with the 5 s grace period, recording when each call was sent.
func (b *nodeBench) deleteAll(ctx context.Context, names []string) {
	var wg sync.WaitGroup
	release := make(chan struct{})
	grace := gracePeriod
	var mu sync.Mutex
	var errs []string
	for _, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-release
			b.tr.update(name, func(r *podRec) { r.deleteSent = time.Now() })
			err := b.kube.CoreV1().Pods(b.ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &grace})
			if err != nil && !apierrors.IsNotFound(err) {
				mu.Lock()
				errs = append(errs, fmt.Sprintf("%s: %v", name, err))
				mu.Unlock()
			}
		}()
	}
	close(release)
	wg.Wait()
	if len(errs) > 0 {
		b.res.note("%d pod deletions failed, first: %s", len(errs), errs[0])
	}
}

func (b *nodeBench) waitAll(ctx context.Context, names []string, timeout time.Duration, what string, f func(r *podRec) bool) bool {
	ok := b.tr.wait(ctx, timeout, func(pods map[string]*podRec) bool { return count(pods, names, f) == len(names) })
	switch {
	case ok:
	case ctx.Err() != nil:
		b.res.note("%s: %d of %d pods when the run was stopped (%v)", what, b.tr.countNow(names, f), len(names), context.Cause(ctx))
	default:
		b.res.note("%s: only %d of %d pods after %v", what, b.tr.countNow(names, f), len(names), timeout)
	}
	return ok
}

func isRunning(r *podRec) bool { return !r.running.IsZero() }
func isReady(r *podRec) bool   { return !r.ready.IsZero() }
func isGone(r *podRec) bool    { return !r.deleted.IsZero() }
func hasIP(r *podRec) bool     { return !r.running.IsZero() && r.ip != "" }

func podNames(prefix string, n int) []string {
	width := len(strconv.Itoa(n - 1))
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%0*d", prefix, width, i)
	}
	return names
}

func (b *nodeBench) pods(names []string, restart v1.RestartPolicy) []*v1.Pod {
	ps := make([]*v1.Pod, len(names))
	for i, n := range names {
		ps[i] = b.pod(n, restart)
	}
	return ps
}

func (b *nodeBench) setup(ctx context.Context) error {
	b.ns = fmt.Sprintf("bench-%s-%s", b.res.Node, b.runID)
	if len(b.ns) > 63 {
		b.ns = b.ns[:63]
	}
	b.res.Namespace = b.ns
	_, err := b.kube.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name: b.ns, Labels: map[string]string{nsLabel: b.runID},
	}}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("creating namespace %s: %w", b.ns, err)
	}
	// Pods are admitted only once the namespace's default ServiceAccount exists.
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := b.kube.CoreV1().ServiceAccounts(b.ns).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		return fmt.Errorf("default service account of %s: %w", b.ns, err)
	}
	wctx, cancel := context.WithCancel(context.Background())
	b.cancel = cancel
	ready := make(chan error, 1)
	go b.tr.run(wctx, b.kube, b.ns, ready)
	select {
	case err := <-ready:
		if err != nil {
			return fmt.Errorf("watching pods of %s: %w", b.ns, err)
		}
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

func (b *nodeBench) prepull(ctx context.Context) bool {
	logf("%s: pre-pulling %s with one pod", b.res.Node, b.image)
	names := b.createAll(ctx, []*v1.Pod{b.pod("prepull", v1.RestartPolicyAlways)})
	if len(names) == 0 {
		return false
	}
	ok := b.waitAll(ctx, names, 3*time.Minute, "pre-pull pod Running", isRunning)
	b.deleteAll(ctx, names)
	b.waitAll(ctx, names, 2*time.Minute, "pre-pull pod deleted", isGone)
	return ok
}

func (b *nodeBench) window(ctx context.Context, key string, pods int) {
	logf("%s: measuring agent RSS/CPU over %v with %d pods", b.res.Node, b.o.window, pods)
	b.res.Windows[key] = measureWindow(ctx, b.pid, pods, b.o.window)
}

// burst: startup latencies, the window with the burst running, then the deletion latencies.
func (b *nodeBench) burst(ctx context.Context) {
	names := podNames("burst", b.o.burst)
	logf("%s: creating %d pods at once", b.res.Node, len(names))
	cpu0, cpuErr := procstat.CPUSeconds(b.pid)
	start := time.Now()
	created := b.createAll(ctx, b.pods(names, v1.RestartPolicyAlways))
	b.waitAll(ctx, created, 3*time.Minute, "burst pods Ready", func(r *podRec) bool { return isRunning(r) && isReady(r) })
	if cpu1, err := procstat.CPUSeconds(b.pid); err == nil && cpuErr == nil && b.pid != 0 {
		v := cpu1 - cpu0
		b.res.BurstAgentCPUSec = &v
	}
	var last time.Time
	for _, n := range created {
		r := b.tr.get(n)
		if !r.running.IsZero() {
			b.res.StartupRunningMs = append(b.res.StartupRunningMs, ms(r.running.Sub(r.t0())))
			if r.running.After(last) {
				last = r.running
			}
		}
		if !r.ready.IsZero() {
			b.res.StartupReadyMs = append(b.res.StartupReadyMs, ms(r.ready.Sub(r.t0())))
		}
	}
	if len(b.res.StartupRunningMs) == len(names) {
		v := ms(last.Sub(start))
		b.res.BurstAllRunningMs = &v
	}
	logf("%s: startup Running p50 %s, max %s", b.res.Node, fmtMs(pct(b.res.StartupRunningMs, 50)), fmtMs(pct(b.res.StartupRunningMs, 100)))

	if ctx.Err() == nil {
		b.window(ctx, "pods_burst", len(created))
	}

	logf("%s: deleting the %d burst pods at once", b.res.Node, len(created))
	b.deleteAll(ctx, created)
	b.waitAll(ctx, created, 2*time.Minute, "burst pods gone", isGone)
	for _, n := range created {
		if r := b.tr.get(n); !r.deleted.IsZero() && !r.deleteSent.IsZero() {
			b.res.DeleteMs = append(b.res.DeleteMs, ms(r.deleted.Sub(r.deleteSent)))
		}
	}
	logf("%s: deletion p50 %s, max %s", b.res.Node, fmtMs(pct(b.res.DeleteMs, 50)), fmtMs(pct(b.res.DeleteMs, 100)))
}

// status: container exits triggered over HTTP, one at a time, → phase Failed in the watch.
func (b *nodeBench) status(ctx context.Context) {
	names := podNames("exit", b.o.statusTrials)
	logf("%s: creating %d pods for the status trials", b.res.Node, len(names))
	created := b.createAll(ctx, b.pods(names, v1.RestartPolicyNever))
	defer func() {
		b.deleteAll(ctx, created)
		b.waitAll(ctx, created, 2*time.Minute, "status pods gone", isGone)
	}()
	b.waitAll(ctx, created, 3*time.Minute, "status pods Running with an IP", hasIP)
	client := &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{DisableKeepAlives: true, DialContext: (&net.Dialer{Timeout: 3 * time.Second}).DialContext},
	}
	failures := 0
	for _, name := range created {
		if ctx.Err() != nil {
			break
		}
		r := b.tr.get(name)
		if r.ip == "" || !r.failed.IsZero() {
			continue
		}
		// A random pause, so that the exits do not fall at the same point of the agents' 1 s relist.
		select {
		case <-time.After(time.Duration(rand.Int64N(int64(time.Second)))):
		case <-ctx.Done():
			return
		}
		url := fmt.Sprintf("http://%s/exit?code=1", net.JoinHostPort(r.ip, strconv.Itoa(httpPort)))
		t0 := time.Now()
		resp, err := client.Get(url)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("HTTP %d", resp.StatusCode)
			}
		}
		if err != nil {
			failures++
			if failures <= 3 {
				b.res.note("status trial %s: GET %s: %v", name, url, err)
			}
			continue
		}
		ok := b.tr.wait(ctx, 30*time.Second, func(pods map[string]*podRec) bool { return !pods[name].failed.IsZero() })
		if !ok {
			b.res.note("status trial %s: phase Failed not seen within 30 s", name)
			continue
		}
		b.res.StatusMs = append(b.res.StatusMs, ms(b.tr.get(name).failed.Sub(t0)))
	}
	logf("%s: exit → Failed p50 %s, p99 %s over %d trials", b.res.Node, fmtMs(pct(b.res.StatusMs, 50)), fmtMs(pct(b.res.StatusMs, 99)), len(b.res.StatusMs))
}

// loaded: --load pods Running, the window, then delete them.
func (b *nodeBench) loaded(ctx context.Context) {
	names := podNames("load", b.o.load)
	logf("%s: creating %d pods", b.res.Node, len(names))
	start := time.Now()
	created := b.createAll(ctx, b.pods(names, v1.RestartPolicyAlways))
	if b.waitAll(ctx, created, 5*time.Minute, "load pods Running", isRunning) && len(created) == len(names) {
		var last time.Time
		for _, n := range created {
			if r := b.tr.get(n); r.running.After(last) {
				last = r.running
			}
		}
		v := ms(last.Sub(start))
		b.res.LoadAllRunningMs = &v
		logf("%s: %d pods Running %s after the first create", b.res.Node, len(created), fmtMs(v))
	}
	if ctx.Err() == nil {
		b.window(ctx, "pods_load", b.tr.countNow(created, isRunning))
	}
	logf("%s: deleting the %d pods", b.res.Node, len(created))
	b.deleteAll(ctx, created)
	b.waitAll(ctx, created, 3*time.Minute, "load pods gone", isGone)
	for _, n := range created {
		if r := b.tr.get(n); !r.deleted.IsZero() && !r.deleteSent.IsZero() {
			b.res.LoadDeleteMs = append(b.res.LoadDeleteMs, ms(r.deleted.Sub(r.deleteSent)))
		}
	}
}

// run measures one node. Its namespace is removed by cleanup, whatever happens.
func (b *nodeBench) run(ctx context.Context) {
	start := time.Now()
	defer func() { b.res.DurationSeconds = time.Since(start).Seconds() }()
	if ok, why := nodeReady(ctx, b.kube, b.res.Node); !ok {
		b.res.Skipped = why
		logf("SKIPPING %s node: %s", b.res.Role, why)
		return
	}
	pidFile := b.o.vkPIDFile
	if b.res.Role == "kubelet" {
		pidFile = b.o.refPIDFile
	}
	if pid, comm, err := procstat.AgentPID(pidFile); err != nil {
		b.res.note("agent RSS/CPU not measured: %v", err)
	} else {
		b.pid, b.res.AgentPID, b.res.AgentComm = pid, pid, comm
		logf("%s: %s agent is pid %d (%s)", b.res.Node, b.res.Role, pid, comm)
	}
	b.res.OtherPods[0], b.res.LoadAvg[0] = b.otherPods(ctx), loadAvg()
	defer func() {
		b.res.OtherPods[1], b.res.LoadAvg[1] = b.otherPods(context.Background()), loadAvg()
		b.res.note("context: %d/%d pods of other users bound to this node at start/end; load average %s at start, %s at end",
			b.res.OtherPods[0], b.res.OtherPods[1], b.res.LoadAvg[0], b.res.LoadAvg[1])
	}()
	if err := b.setup(ctx); err != nil {
		b.res.note("%v", err)
		return
	}
	if !b.prepull(ctx) {
		b.res.note("the pre-pull pod did not run: no further measurement on this node")
		return
	}
	steps := []func(context.Context){
		func(ctx context.Context) { b.window(ctx, "idle", 0) },
		b.burst,
		b.status,
	}
	if b.o.load > 0 {
		steps = append(steps, b.loaded)
	}
	for _, step := range steps {
		if ctx.Err() != nil {
			b.res.note("deadline reached or interrupted: remaining measurements skipped")
			return
		}
		// The node is shared: someone may take it down while this runs.
		if ok, why := nodeReady(ctx, b.kube, b.res.Node); !ok {
			b.res.note("%s: remaining measurements skipped", why)
			return
		}
		step(ctx)
	}
}

// otherPods counts the pods bound to the node outside this run's namespace (-1 if unknown).
func (b *nodeBench) otherPods(ctx context.Context) int {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	l, err := b.kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + b.res.Node})
	if err != nil {
		return -1
	}
	n := 0
	for _, p := range l.Items {
		if p.Namespace != b.ns {
			n++
		}
	}
	return n
}

// loadAvg is the first three fields of /proc/loadavg.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// cleanup deletes the node's pods (force after a while) and its namespace; bounded in time.
func (b *nodeBench) cleanup() {
	if b.ns == "" {
		return
	}
	defer func() {
		if b.cancel != nil {
			b.cancel()
		}
	}()
	deleteNamespace(b.kube, b.ns)
	b.ns = ""
}

func deleteNamespace(kube kubernetes.Interface, ns string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pods := kube.CoreV1().Pods(ns)
	grace := gracePeriod
	if err := pods.DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &grace}, metav1.ListOptions{}); err != nil && !apierrors.IsNotFound(err) {
		logf("cleanup: deleting pods of %s: %v", ns, err)
	}
	empty := func(ctx context.Context) (bool, error) {
		l, err := pods.List(ctx, metav1.ListOptions{})
		if err != nil {
			return apierrors.IsNotFound(err), nil
		}
		return len(l.Items) == 0, nil
	}
	if err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 45*time.Second, true, empty); err != nil {
		// The node's agent did not finish them (it may be gone): remove them from the API.
		zero := int64(0)
		logf("cleanup: pods of %s still there after 45 s, force-deleting them", ns)
		_ = pods.DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
	}
	if err := kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		logf("cleanup: deleting namespace %s: %v", ns, err)
		return
	}
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		logf("cleanup: namespace %s still terminating (the namespace controller finishes it)", ns)
		return
	}
	logf("cleanup: namespace %s removed", ns)
}

// cleanupLeftovers removes the namespaces and floor sandboxes of earlier runs.
func cleanupLeftovers(kube kubernetes.Interface, endpoint string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if kube != nil {
		l, err := kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: nsLabel})
		if err == nil {
			var wg sync.WaitGroup
			for _, ns := range l.Items {
				logf("cleanup: namespace %s left by run %s", ns.Name, ns.Labels[nsLabel])
				wg.Add(1)
				go func() { defer wg.Done(); deleteNamespace(kube, ns.Name) }()
			}
			wg.Wait()
		}
	}
	if endpoint != "" {
		rt, err := cri.Connect(ctx, endpoint, 30*time.Second)
		if err != nil {
			logf("cleanup: %v", err)
			return
		}
		removeFloorSandboxes(rt, "")
	}
}

// ---------------------------------------------------------------------------------------------
// Runtime floor.

type floorBench struct {
	rt       *cri.Client
	runID    string
	imageRef string
	image    string
	logRoot  string
}

type floorTimes struct {
	sandbox, create, start time.Duration
	done                   time.Time
	id                     string
	err                    error
}

func (f *floorBench) one(ctx context.Context, i int) floorTimes {
	var t floorTimes
	uid := fmt.Sprintf("%s-%03d", f.runID, i)
	name := "floor-" + uid
	logDir := filepath.Join(f.logRoot, "vk-bench-floor_"+name+"_"+uid)
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		t.err = err
		return t
	}
	nsOpts := &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_POD, Pid: runtimeapi.NamespaceMode_CONTAINER, Ipc: runtimeapi.NamespaceMode_POD}
	labels := map[string]string{floorLabel: f.runID}
	sbCfg := &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: name, Namespace: "vk-bench-floor", Uid: uid},
		Hostname:     name,
		LogDirectory: logDir,
		Labels:       labels,
		Linux: &runtimeapi.LinuxPodSandboxConfig{
			CgroupParent:    floorCgroupRoot + "/kubepods/besteffort/pod" + uid,
			SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{NamespaceOptions: nsOpts},
		},
	}
	t0 := time.Now()
	id, err := f.rt.Runtime.RunPodSandbox(ctx, sbCfg, "")
	t.sandbox = time.Since(t0)
	if err != nil {
		t.err = fmt.Errorf("RunPodSandbox: %w", err)
		return t
	}
	t.id = id
	cCfg := &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: containerName},
		Image:    &runtimeapi.ImageSpec{Image: f.imageRef, UserSpecifiedImage: f.image},
		Args:     []string{"serve", "--port", strconv.Itoa(httpPort)},
		Labels:   labels,
		LogPath:  containerName + "/0.log",
		Linux: &runtimeapi.LinuxContainerConfig{
			SecurityContext: &runtimeapi.LinuxContainerSecurityContext{NamespaceOptions: nsOpts},
		},
	}
	t1 := time.Now()
	cid, err := f.rt.Runtime.CreateContainer(ctx, id, cCfg, sbCfg)
	t.create = time.Since(t1)
	if err != nil {
		t.err = fmt.Errorf("CreateContainer: %w", err)
		return t
	}
	t2 := time.Now()
	err = f.rt.Runtime.StartContainer(ctx, cid)
	t.done = time.Now()
	t.start = t.done.Sub(t2)
	if err != nil {
		t.err = fmt.Errorf("StartContainer: %w", err)
	}
	return t
}

// teardown stops and removes the sandboxes at once (their containers go with them).
func (f *floorBench) teardown(ids []string) time.Duration {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	for _, id := range ids {
		if id == "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f.rt.Runtime.StopPodSandbox(ctx, id); err != nil {
				logf("floor: stopping sandbox %s: %v", id, err)
			}
			if err := f.rt.Runtime.RemovePodSandbox(ctx, id); err != nil {
				logf("floor: removing sandbox %s: %v", id, err)
			}
		}()
	}
	wg.Wait()
	return time.Since(start)
}

// removeFloorSandboxes removes every sandbox carrying floorLabel (with this value, or any if
// runID is ""), the floor's log directories and its empty cgroup directories.
func removeFloorSandboxes(rt *cri.Client, runID string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sbs, err := rt.Runtime.ListPodSandbox(ctx, nil)
	if err != nil {
		logf("floor cleanup: listing sandboxes: %v", err)
		return
	}
	var ids []string
	for _, sb := range sbs {
		if v, ok := sb.Labels[floorLabel]; ok && (runID == "" || v == runID) {
			ids = append(ids, sb.Id)
		}
	}
	if len(ids) > 0 {
		logf("floor cleanup: removing %d sandboxes", len(ids))
		(&floorBench{rt: rt}).teardown(ids)
	}
	removeEmptyCgroups()
}

// removeEmptyCgroups removes the floor's cgroup directories (runc leaves the parents), deepest
// first, in every cgroup v1 hierarchy and in the v2 tree; a directory still in use stays.
func removeEmptyCgroups() {
	roots, _ := filepath.Glob("/sys/fs/cgroup/*" + floorCgroupRoot)
	if fi, err := os.Stat("/sys/fs/cgroup" + floorCgroupRoot); err == nil && fi.IsDir() {
		roots = append(roots, "/sys/fs/cgroup"+floorCgroupRoot)
	}
	for _, root := range roots {
		var dirs []string
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		sort.Slice(dirs, func(i, j int) bool { return strings.Count(dirs[i], "/") > strings.Count(dirs[j], "/") })
		for _, d := range dirs {
			_ = syscall.Rmdir(d)
		}
	}
}

func runFloor(ctx context.Context, endpoint, image, stackDir, runID string, n, seq int) *FloorResult {
	res := &FloorResult{Endpoint: endpoint, Image: image, ConcN: n}
	rt, err := cri.Connect(ctx, endpoint, 2*time.Minute)
	if err != nil {
		res.Errors = append(res.Errors, err.Error())
		return res
	}
	st, err := rt.Images.ImageStatus(ctx, &runtimeapi.ImageSpec{Image: image}, false)
	if err == nil && (st == nil || st.Image == nil) {
		logf("floor: pulling %s (not timed)", image)
		_, err = rt.Images.PullImage(ctx, &runtimeapi.ImageSpec{Image: image}, nil, nil)
		if err == nil {
			st, err = rt.Images.ImageStatus(ctx, &runtimeapi.ImageSpec{Image: image}, false)
		}
	}
	if err != nil || st == nil || st.Image == nil {
		res.Errors = append(res.Errors, fmt.Sprintf("image %s: %v", image, err))
		return res
	}
	logRoot, err := os.MkdirTemp(stackDir, "bench-floor-logs-")
	if err != nil {
		res.Errors = append(res.Errors, err.Error())
		return res
	}
	defer os.RemoveAll(logRoot)
	f := &floorBench{rt: rt, runID: runID, imageRef: st.Image.Id, image: image, logRoot: logRoot}
	defer removeFloorSandboxes(rt, runID)

	logf("floor: %d sandboxes one after the other on %s", seq, endpoint)
	var seqIDs []string
	for i := 0; i < seq && ctx.Err() == nil; i++ {
		t := f.one(ctx, i)
		seqIDs = append(seqIDs, t.id)
		if t.err != nil {
			res.Errors = append(res.Errors, t.err.Error())
			continue
		}
		res.SeqRunPodSandboxMs = append(res.SeqRunPodSandboxMs, ms(t.sandbox))
		res.SeqCreateMs = append(res.SeqCreateMs, ms(t.create))
		res.SeqStartMs = append(res.SeqStartMs, ms(t.start))
		res.SeqTotalMs = append(res.SeqTotalMs, ms(t.sandbox+t.create+t.start))
	}
	f.teardown(seqIDs)

	logf("floor: %d sandboxes at once", n)
	times := make([]floorTimes, n)
	var wg sync.WaitGroup
	release := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-release
			times[i] = f.one(ctx, seq+i)
		}()
	}
	start := time.Now()
	close(release)
	wg.Wait()
	var last time.Time
	var ids []string
	for _, t := range times {
		ids = append(ids, t.id)
		if t.err != nil {
			res.Errors = append(res.Errors, t.err.Error())
			continue
		}
		res.ConcPerPodMs = append(res.ConcPerPodMs, ms(t.done.Sub(start)))
		if t.done.After(last) {
			last = t.done
		}
	}
	if len(res.ConcPerPodMs) == n {
		res.ConcAllMs = ms(last.Sub(start))
	}
	res.ConcTeardownMs = ms(f.teardown(ids))
	logf("floor: %d started in %s, stopped and removed in %s", len(res.ConcPerPodMs), fmtMs(res.ConcAllMs), fmtMs(res.ConcTeardownMs))
	return res
}

// ---------------------------------------------------------------------------------------------
// Statistics and output.

// pct is the nearest-rank percentile (p in (0,100]) of the samples; NaN when there are none.
func pct(samples []float64, p float64) float64 {
	if len(samples) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), samples...)
	sort.Float64s(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	rank = max(1, min(rank, len(s)))
	return s[rank-1]
}

func fmtMs(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.0f ms", v)
}

func ptr(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

func buildTable(vk, ref *NodeResult) []Row {
	type metric struct {
		name, unit string
		f          func(r *NodeResult) float64
	}
	samples := func(get func(r *NodeResult) []float64, p float64) func(r *NodeResult) float64 {
		return func(r *NodeResult) float64 { return pct(get(r), p) }
	}
	num := func(get func(r *NodeResult) []float64) func(r *NodeResult) float64 {
		return func(r *NodeResult) float64 { return float64(len(get(r))) }
	}
	opt := func(get func(r *NodeResult) *float64) func(r *NodeResult) float64 {
		return func(r *NodeResult) float64 {
			if v := get(r); v != nil {
				return *v
			}
			return math.NaN()
		}
	}
	win := func(key string, get func(w *Window) float64) func(r *NodeResult) float64 {
		return func(r *NodeResult) float64 {
			w := r.Windows[key]
			if w == nil || w.Unavailable != "" {
				return math.NaN()
			}
			return get(w)
		}
	}
	running := func(r *NodeResult) []float64 { return r.StartupRunningMs }
	ready := func(r *NodeResult) []float64 { return r.StartupReadyMs }
	status := func(r *NodeResult) []float64 { return r.StatusMs }
	del := func(r *NodeResult) []float64 { return r.DeleteMs }
	loadDel := func(r *NodeResult) []float64 { return r.LoadDeleteMs }
	rssMean := func(w *Window) float64 { return w.RSSMeanMiB }
	rssMax := func(w *Window) float64 { return w.RSSMaxMiB }
	cpuSec := func(w *Window) float64 { return w.CPUSeconds }
	cpuPct := func(w *Window) float64 { return w.CPUPercent }

	metrics := []metric{
		{"startup: create → Running, pods", "n", num(running)},
		{"startup: create → Running p50", "ms", samples(running, 50)},
		{"startup: create → Running p90", "ms", samples(running, 90)},
		{"startup: create → Running p99", "ms", samples(running, 99)},
		{"startup: create → Running max", "ms", samples(running, 100)},
		{"startup: create → Ready p50", "ms", samples(ready, 50)},
		{"startup: create → Ready p90", "ms", samples(ready, 90)},
		{"startup: create → Ready p99", "ms", samples(ready, 99)},
		{"startup: create → Ready max", "ms", samples(ready, 100)},
		{"burst: first create → last Running", "ms", opt(func(r *NodeResult) *float64 { return r.BurstAllRunningMs })},
		{"burst: agent CPU, create → all Ready", "s", opt(func(r *NodeResult) *float64 { return r.BurstAgentCPUSec })},
		{"status: exit → Failed, trials", "n", num(status)},
		{"status: exit → Failed p50", "ms", samples(status, 50)},
		{"status: exit → Failed p99", "ms", samples(status, 99)},
		{"delete (burst pods): call → gone p50", "ms", samples(del, 50)},
		{"delete (burst pods): call → gone p99", "ms", samples(del, 99)},
		{"idle: agent RSS mean", "MiB", win("idle", rssMean)},
		{"idle: agent RSS max", "MiB", win("idle", rssMax)},
		{"idle: agent CPU in window", "s", win("idle", cpuSec)},
		{"idle: agent CPU", "% core", win("idle", cpuPct)},
		{"burst pods running: agent RSS mean", "MiB", win("pods_burst", rssMean)},
		{"burst pods running: agent RSS max", "MiB", win("pods_burst", rssMax)},
		{"burst pods running: agent CPU in window", "s", win("pods_burst", cpuSec)},
		{"burst pods running: agent CPU", "% core", win("pods_burst", cpuPct)},
		{"load: first create → last Running", "ms", opt(func(r *NodeResult) *float64 { return r.LoadAllRunningMs })},
		{"load pods running: agent RSS mean", "MiB", win("pods_load", rssMean)},
		{"load pods running: agent RSS max", "MiB", win("pods_load", rssMax)},
		{"load pods running: agent CPU in window", "s", win("pods_load", cpuSec)},
		{"load pods running: agent CPU", "% core", win("pods_load", cpuPct)},
		{"delete (load pods): call → gone p50", "ms", samples(loadDel, 50)},
		{"delete (load pods): call → gone p99", "ms", samples(loadDel, 99)},
	}
	value := func(r *NodeResult, f func(*NodeResult) float64) *float64 {
		if r == nil || r.Skipped != "" {
			return nil
		}
		return ptr(f(r))
	}
	var rows []Row
	for _, m := range metrics {
		row := Row{Metric: m.name, Unit: m.unit, VKCRI: value(vk, m.f), Kubelet: value(ref, m.f)}
		if row.VKCRI != nil && row.Kubelet != nil && *row.Kubelet != 0 && m.unit != "n" {
			row.Ratio = ptr(*row.VKCRI / *row.Kubelet)
		}
		rows = append(rows, row)
	}
	return rows
}

func fmtVal(v *float64, unit string) string {
	if v == nil {
		return "n/a"
	}
	switch unit {
	case "ms", "n":
		return fmt.Sprintf("%.0f", *v)
	case "s":
		return fmt.Sprintf("%.2f", *v)
	default:
		return fmt.Sprintf("%.1f", *v)
	}
}

func printReport(w io.Writer, res *Result, o options) {
	vkName, refName := "vk-cri", "kubelet"
	for _, n := range res.Nodes {
		label := n.Node
		if n.Skipped != "" {
			label += ", skipped"
		}
		if n.Role == "vk-cri" {
			vkName = "vk-cri (" + label + ")"
		} else {
			refName = "kubelet (" + label + ")"
		}
	}
	fmt.Fprintf(w, "\n== vk-cri bench %s: %d-pod burst, %d status trials, %d-pod load, %v resource windows ==\n",
		res.RunID, o.burst, o.statusTrials, o.load, o.window)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "metric\tunit\t%s\t%s\tratio vk-cri/kubelet\t\n", vkName, refName)
	for _, r := range res.Table {
		ratio := "-"
		if r.Ratio != nil {
			ratio = fmt.Sprintf("%.2f", *r.Ratio)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\n", r.Metric, r.Unit, fmtVal(r.VKCRI, r.Unit), fmtVal(r.Kubelet, r.Unit), ratio)
	}
	tw.Flush()
	if f := res.Floor; f != nil {
		fmt.Fprintf(w, "\n== runtime floor: CRI RunPodSandbox + CreateContainer + StartContainer directly on %s ==\n", f.Endpoint)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "metric\tunit\tvalue\t\n")
		line := func(name, unit string, v float64) {
			fmt.Fprintf(tw, "%s\t%s\t%s\t\n", name, unit, fmtVal(ptr(v), unit))
		}
		line(fmt.Sprintf("sequential (%d): RunPodSandbox p50", len(f.SeqTotalMs)), "ms", pct(f.SeqRunPodSandboxMs, 50))
		line(fmt.Sprintf("sequential (%d): CreateContainer p50", len(f.SeqTotalMs)), "ms", pct(f.SeqCreateMs, 50))
		line(fmt.Sprintf("sequential (%d): StartContainer p50", len(f.SeqTotalMs)), "ms", pct(f.SeqStartMs, 50))
		line(fmt.Sprintf("sequential (%d): total per pod p50", len(f.SeqTotalMs)), "ms", pct(f.SeqTotalMs, 50))
		line(fmt.Sprintf("concurrent (%d at once): per pod p50", f.ConcN), "ms", pct(f.ConcPerPodMs, 50))
		line(fmt.Sprintf("concurrent (%d at once): per pod p90", f.ConcN), "ms", pct(f.ConcPerPodMs, 90))
		line(fmt.Sprintf("concurrent (%d at once): all started", f.ConcN), "ms", f.ConcAllMs)
		line(fmt.Sprintf("concurrent (%d at once): stop + remove all", f.ConcN), "ms", f.ConcTeardownMs)
		tw.Flush()
		for _, e := range f.Errors {
			fmt.Fprintf(w, "  floor error: %s\n", e)
		}
	}
	fmt.Fprintln(w, "\nnotes:")
	for _, n := range res.Notes {
		fmt.Fprintf(w, "  - %s\n", n)
	}
	for _, n := range res.Nodes {
		if n.Skipped != "" {
			fmt.Fprintf(w, "  - %s node %s SKIPPED: %s\n", n.Role, n.Node, n.Skipped)
		}
		for _, msg := range n.Notes {
			fmt.Fprintf(w, "  - %s: %s\n", n.Node, msg)
		}
	}
	fmt.Fprintf(w, "total %.0f s\n", res.DurationSeconds)
}

// ---------------------------------------------------------------------------------------------

func main() {
	o := parseOptions()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	env, err := stackenv.Load(o.envFile)
	if err != nil {
		return err
	}
	stackDir := env["STACK_DIR"]
	if o.vkPIDFile == "" {
		o.vkPIDFile = filepath.Join(stackDir, "vk-cri-"+o.vkNode+".pid")
	}
	if o.refPIDFile == "" {
		o.refPIDFile = filepath.Join(stackDir, "kubelet-"+o.refNode+".pid")
	}
	if o.image == "" {
		o.image = env["REGISTRY"] + "/vk-cri/vktest:latest"
	}
	if o.floorEndpoint == "" {
		o.floorEndpoint = env["CRI_ENDPOINT"]
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", env["KUBECONFIG"])
	if err != nil {
		return fmt.Errorf("admin kubeconfig: %w", err)
	}
	// Bursts of creations and deletions must not be throttled by the client.
	cfg.QPS, cfg.Burst = 500, 1000
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if o.cleanupOnly {
		cleanupLeftovers(kube, o.floorEndpoint)
		return nil
	}

	// The first SIGINT/SIGTERM stops the measurements and lets the clean-up run. The same Ctrl-C
	// may arrive twice (from the terminal and forwarded by a wrapper), so only a signal more than
	// 3 s after the first one exits at once, without clean-up.
	sigCtx, interrupt := context.WithCancelCause(context.Background())
	defer interrupt(nil)
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		sig := <-sigs
		logf("got %v: stopping the measurements and cleaning up (another signal after 3 s exits at once)", sig)
		interrupt(fmt.Errorf("interrupted by %v", sig))
		first := time.Now()
		for sig := range sigs {
			if time.Since(first) > 3*time.Second {
				logf("got %v again: exiting without clean-up", sig)
				os.Exit(130)
			}
		}
	}()
	ctx, cancel := context.WithTimeoutCause(sigCtx, o.deadline, fmt.Errorf("bench deadline (%v) reached", o.deadline))
	defer cancel()

	host, _ := os.Hostname()
	res := &Result{
		RunID:   strconv.FormatInt(time.Now().Unix()%1e6, 36) + strconv.Itoa(rand.IntN(100)),
		Started: time.Now(),
		Host:    host,
		CPUs:    goruntime.NumCPU(),
		Image:   o.image,
	}
	res.Notes = []string{
		"startup: creation = the earlier of the Create call returning and the pod's first watch event; Running / Ready = the first watch event with phase Running / condition Ready=True; all times are this client's receive times",
		"status: T0 = GET /exit?code=1 sent to the pod (vktest answers, then exits 100 ms later), T1 = watch event with phase Failed (restartPolicy Never); trials one at a time with a random 0-1 s pause before each",
		"delete: T0 = Delete call (grace period 5 s) sent, T1 = DELETED watch event; all pods of the set deleted at once",
		fmt.Sprintf("RSS = VmRSS of the agent process (mean and max of 500 ms samples), CPU = utime+stime of the agent process over a %v window (shortened from 60 s to keep the run short)", o.window),
		"percentiles are nearest-rank: with 30 samples p99 is the maximum",
		fmt.Sprintf("shared %d-core machine: other engineers' tests and this tool itself run alongside; figures are noisy, compare ratios across runs", res.CPUs),
	}
	cleanupLeftovers(kube, "")

	var vkRes, refRes *NodeResult
	var benches []*nodeBench
	targets := []struct{ role, name string }{{"vk-cri", o.vkNode}, {"kubelet", o.refNode}}
	for _, t := range targets {
		if t.name == "" {
			continue
		}
		nr := &NodeResult{Role: t.role, Node: t.name, Windows: map[string]*Window{}}
		res.Nodes = append(res.Nodes, nr)
		if t.role == "vk-cri" {
			vkRes = nr
		} else {
			refRes = nr
		}
		b := &nodeBench{o: o, kube: kube, image: o.image, res: nr, tr: newTracker(), runID: res.RunID}
		benches = append(benches, b)
	}
	// Whatever happens (error, deadline, first SIGINT/SIGTERM), the namespaces go.
	defer func() {
		for _, b := range benches {
			b.cleanup()
		}
	}()
	for _, b := range benches {
		if ctx.Err() != nil {
			b.res.Skipped = "deadline reached or interrupted before this node"
			continue
		}
		logf("=== %s node %s ===", b.res.Role, b.res.Node)
		b.run(ctx)
		b.cleanup()
	}
	if !o.skipFloor && ctx.Err() == nil {
		logf("=== runtime floor ===")
		res.Floor = runFloor(ctx, o.floorEndpoint, o.image, stackDir, res.RunID, o.floor, o.floorSeq)
	}
	if ctx.Err() != nil {
		res.Notes = append(res.Notes, "the run was cut short: "+context.Cause(ctx).Error())
	}
	res.Table = buildTable(vkRes, refRes)
	res.DurationSeconds = time.Since(res.Started).Seconds()
	printReport(os.Stdout, res, o)
	if o.out != "" {
		b, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(o.out, append(b, '\n'), 0o644); err != nil {
			return err
		}
		logf("results written to %s", o.out)
	}
	if err := context.Cause(sigCtx); err != nil {
		return err
	}
	return nil
}
