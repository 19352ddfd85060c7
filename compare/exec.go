package compare

import (
	"bytes"
	"context"
	"errors"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/client-go/util/exec"
)

// maxOutput caps what is kept of an exec's stdout and stderr and of a log.
const maxOutput = 64 << 10

// cappedBuffer keeps the first maxOutput bytes written to it.
type cappedBuffer struct {
	bytes.Buffer
	truncated bool
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if room := maxOutput - b.Len(); room < len(p) {
		b.truncated = true
		if room > 0 {
			b.Buffer.Write(p[:room])
		}
		return len(p), nil
	}
	return b.Buffer.Write(p)
}

func (b *cappedBuffer) text() string {
	if b.truncated {
		return b.String() + "\n(truncated)\n"
	}
	return b.String()
}

// execInPod runs a command in a container through the pods/exec subresource, as kubectl exec
// does: WebSocket first, SPDY when the server does not upgrade. The texts are raw (normalised
// later, once both sides' volatile strings are known).
func execInPod(ctx context.Context, cfg *rest.Config, client kubernetes.Interface, ns, pod, container string, command []string) *ExecRecord {
	req := client.CoreV1().RESTClient().Post().
		Resource("pods").Namespace(ns).Name(pod).SubResource("exec").
		VersionedParams(&v1.PodExecOptions{
			Container: container,
			Command:   command,
			Stdout:    true,
			Stderr:    true,
		}, scheme.ParameterCodec)
	rec := &ExecRecord{}
	spdyExec, err := remotecommand.NewSPDYExecutor(cfg, "POST", req.URL())
	if err != nil {
		rec.Error = err.Error()
		return rec
	}
	wsExec, err := remotecommand.NewWebSocketExecutor(cfg, "GET", req.URL().String())
	if err != nil {
		rec.Error = err.Error()
		return rec
	}
	executor, err := remotecommand.NewFallbackExecutor(wsExec, spdyExec, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
	if err != nil {
		rec.Error = err.Error()
		return rec
	}
	var stdout, stderr cappedBuffer
	err = executor.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &stdout, Stderr: &stderr})
	rec.Stdout, rec.Stderr = stdout.text(), stderr.text()
	var exitErr utilexec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr) && exitErr.Exited():
		rec.ExitCode = exitErr.ExitStatus()
	case ctx.Err() != nil:
		rec.Error = "exec timed out"
	default:
		rec.Error = err.Error()
	}
	return rec
}
