// Command vk-cri is a Kubernetes node agent: a virtual-kubelet node whose pods run on a CRI
// runtime, the way the kubelet runs them.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "v0.1.0-dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newRootCommand().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "vk-cri:", err)
		os.Exit(exitCode(err))
	}
}
