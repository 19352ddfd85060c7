package provider

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/cri-client/pkg/logs"
	"k8s.io/utils/buffer"

	"github.com/vk-cri/vk-cri/cri"
)

// The kubelet's termination message limits.
const (
	// maxTerminationMessageBytes is what is read of a container's terminationMessagePath (its end).
	maxTerminationMessageBytes = 4 << 10
	// maxPodTerminationMessageBytes is shared by all the containers of a pod in its status.
	maxPodTerminationMessageBytes = 12 << 10
	// With FallbackToLogsOnError, the message is the log's last lines, at most this many bytes.
	fallbackLogLines = 80
	fallbackLogBytes = 2 << 10
	// reasonContainerCannotRun is a runtime's reason for a container that never ran: it has no
	// log to fall back to.
	reasonContainerCannotRun = "ContainerCannotRun"
)

// podContainerDir is where vk-cri keeps a pod's per-container files (termination message files),
// under its root directory, as the kubelet's pods/<uid>/containers/<name>.
func podContainerDir(root, podUID, container string) string {
	return filepath.Join(root, "pods", podUID, "containers", container)
}

// terminationMessageMount creates an empty, world-writable file for one container instance and
// returns the mount that puts it at the container's terminationMessagePath.
func terminationMessageMount(root string, pod *v1.Pod, c *v1.Container) (*runtimeapi.Mount, error) {
	if c.TerminationMessagePath == "" {
		return nil, nil
	}
	dir := podContainerDir(root, string(pod.UID), c.Name)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("creating the termination message directory: %w", err)
	}
	var id [4]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, hex.EncodeToString(id[:]))
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("creating the termination message file: %w", err)
	}
	f.Close()
	// Any user of the container may write its message, whatever the umask.
	if err := os.Chmod(path, 0o666); err != nil {
		return nil, fmt.Errorf("termination message file mode: %w", err)
	}
	return &runtimeapi.Mount{HostPath: path, ContainerPath: c.TerminationMessagePath}, nil
}

// removePodContainerDirs removes the per-container files of a pod that is gone.
func removePodContainerDirs(root, podUID string) error {
	return os.RemoveAll(filepath.Join(root, "pods", podUID, "containers"))
}

// terminationMessageFromFile reads what an exited container wrote to its termination message
// path (the last maxTerminationMessageBytes of it). useLogs says whether its log must be read
// instead: FallbackToLogsOnError was asked for and the file gave nothing.
func terminationMessageFromFile(st *runtimeapi.ContainerStatus, path string, fallback bool) (msg string, useLogs bool) {
	if path == "" {
		return "", fallback
	}
	for _, m := range st.GetMounts() {
		if m.ContainerPath != path {
			continue
		}
		data, err := readTail(m.HostPath, maxTerminationMessageBytes)
		if errors.Is(err, os.ErrNotExist) {
			return "", fallback
		}
		if err != nil {
			return fmt.Sprintf("Error on reading termination log %s: %v", m.HostPath, err), false
		}
		return string(data), fallback && len(data) == 0
	}
	return "", fallback
}

// readTail returns the last max bytes of a file.
func readTail(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if off := fi.Size() - max; off > 0 {
		if _, err := f.Seek(off, io.SeekStart); err != nil {
			return nil, err
		}
	}
	return io.ReadAll(io.LimitReader(f, max))
}

// terminationMessage is the message of an exited container's terminated state as the kubelet
// builds it: the runtime's message, then what the container wrote to its termination message
// path or, with FallbackToLogsOnError after a failure, the end of its log.
func (in *inspector) terminationMessage(ctx context.Context, st *runtimeapi.ContainerStatus) string {
	path := st.GetAnnotations()[cri.ContainerTerminationMessagePathAnnotation]
	policy := v1.TerminationMessagePolicy(st.GetAnnotations()[cri.ContainerTerminationMessagePolicyAnnotation])
	fallback := policy == v1.TerminationMessageFallbackToLogsOnError && st.ExitCode != 0 && st.Reason != reasonContainerCannotRun
	msg, useLogs := terminationMessageFromFile(st, path, fallback)
	if useLogs {
		msg = in.lastLogLines(ctx, st)
	}
	out := st.Message
	if msg != "" {
		if out != "" {
			out += ": "
		}
		out += msg
	}
	return out
}

// lastLogLines returns the end of a container's log: its last fallbackLogLines lines, at most
// fallbackLogBytes of them.
func (in *inspector) lastLogLines(ctx context.Context, st *runtimeapi.ContainerStatus) string {
	lines := int64(fallbackLogLines)
	ring, err := buffer.NewTypedRingFixed[byte](fallbackLogBytes)
	if err != nil {
		return ""
	}
	if err := logs.ReadLogs(ctx, st.GetLogPath(), st.GetId(), &logs.LogOptions{TailLines: &lines}, in.rt.Runtime, ring, ring); err != nil {
		return fmt.Sprintf("Error on reading termination message from logs: %v", err)
	}
	return string(ring.Slice())
}

// limitTerminationMessages cuts the terminated states' messages so that the pod's status holds
// at most maxPodTerminationMessageBytes of them, shared evenly by its containers, as the
// kubelet's status manager does.
func limitTerminationMessages(pod *v1.Pod, s *v1.PodStatus) {
	per := maxPodTerminationMessageBytes
	if n := len(pod.Spec.Containers) + len(pod.Spec.InitContainers) + len(pod.Spec.EphemeralContainers); n > 0 {
		per /= n
	}
	cut := func(st *v1.ContainerState) {
		if t := st.Terminated; t != nil && len(t.Message) > per {
			t.Message = t.Message[:per]
		}
	}
	for _, list := range [][]v1.ContainerStatus{s.InitContainerStatuses, s.ContainerStatuses, s.EphemeralContainerStatuses} {
		for i := range list {
			cut(&list[i].State)
			cut(&list[i].LastTerminationState)
		}
	}
}
