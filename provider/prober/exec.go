package prober

import (
	"context"
	"errors"
	"time"

	remote "k8s.io/cri-client/pkg"
	utilexec "k8s.io/utils/exec"
)

// maxExecOutput caps how much of an exec action's output is kept (and quoted in events).
const maxExecOutput = 10 << 10

// Execer runs a command in a container and waits for it: CRI ExecSync. cri-client's runtime
// service is one; a non-zero exit is an error carrying the exit code.
type Execer interface {
	ExecSync(ctx context.Context, containerID string, cmd []string, timeout time.Duration) (stdout, stderr []byte, err error)
}

// Exec runs cmd in the container through ExecSync with the timeout. Exit code 0 succeeds, any
// other fails; a timeout fails with the runtime's message. The output (stdout then stderr, at
// most 10 KiB) is returned for events. Any other error (the runtime unreachable, the container
// gone) is OutcomeUnknown with that error.
func Exec(ctx context.Context, rt Execer, containerID string, cmd []string, timeout time.Duration) (Outcome, string, error) {
	stdout, stderr, err := rt.ExecSync(ctx, containerID, cmd, timeout)
	out := append(append([]byte{}, stdout...), stderr...)
	if len(out) > maxExecOutput {
		out = out[:maxExecOutput]
	}
	if err == nil {
		return OutcomeSuccess, string(out), nil
	}
	var exit utilexec.ExitError
	if errors.As(err, &exit) {
		if exit.ExitStatus() == 0 {
			return OutcomeSuccess, string(out), nil
		}
		return OutcomeFailure, string(out), nil
	}
	if errors.Is(err, remote.ErrCommandTimedOut) {
		return OutcomeFailure, err.Error(), nil
	}
	return OutcomeUnknown, "", err
}
