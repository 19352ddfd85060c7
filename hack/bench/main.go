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
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

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
