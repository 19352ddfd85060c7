// The command line: flags and their defaults, and the progress log.

package main

import (
	"flag"
	"fmt"
	"os"
	"time"
)

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
