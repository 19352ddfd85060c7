// The measurements on one node: the startup burst, status propagation, deletion and the
// agent's resource use idle and under load.

package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vk-cri/vk-cri/internal/procstat"
)

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
