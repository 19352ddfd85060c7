package streaming

import (
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/util/flushwriter"
)

type logsHandler struct {
	host Host
	log  *logrus.Entry
}

func (h *logsHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ns, podName, container := r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container")
	opts, err := parseLogOptions(r.URL.Query())
	if err != nil {
		writeError(w, http.StatusBadRequest, `{"message": "Unable to decode query."}`)
		return
	}
	if err := validateLogOptions(opts); err != nil {
		writeError(w, http.StatusUnprocessableEntity, `{"message": "Invalid request."}`)
		return
	}
	pod, err := h.host.GetPod(r.Context(), ns, podName)
	if err != nil {
		writeError(w, http.StatusNotFound, fmt.Sprintf("pod %q does not exist", podName))
		return
	}
	if !hasContainer(pod, container) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("container %q not found in pod %q", container, podName))
		return
	}
	// Split streams are an alpha feature of the kubelet, off by default: only "All" is served.
	if opts.Stream != nil && *opts.Stream != v1.LogStreamAll {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("unable to return the given log stream: %q. Please enable PodLogsQuerySplitStreams feature gate in kubelet", *opts.Stream))
		return
	}
	if _, ok := w.(http.Flusher); !ok {
		writeError(w, http.StatusInternalServerError, "the response cannot be flushed, cannot show logs")
		return
	}
	out := &startedWriter{w: flushwriter.Wrap(w)}
	w.Header().Set("Transfer-Encoding", "chunked")
	err = h.host.ContainerLogs(r.Context(), ns, podName, container, opts, out, out)
	switch {
	case err == nil:
	case !out.started:
		writeError(w, http.StatusBadRequest, err.Error())
	case r.Context().Err() == nil:
		// The status is sent already; like the kubelet's error reply, the error's text then
		// goes into the body (the client reads it as log output).
		h.log.WithError(err).WithFields(logrus.Fields{"pod": ns + "/" + podName, "container": container}).Warn("reading container log")
		_, _ = io.WriteString(out.w, err.Error())
	}
}

// startedWriter remembers whether the response has begun (even with an empty write), after
// which its status can no longer change.
type startedWriter struct {
	w       io.Writer
	started bool
}

func (s *startedWriter) Write(p []byte) (int, error) {
	s.started = true
	return s.w.Write(p)
}

func hasContainer(pod *v1.Pod, name string) bool {
	for _, c := range pod.Spec.Containers {
		if c.Name == name {
			return true
		}
	}
	for _, c := range pod.Spec.InitContainers {
		if c.Name == name {
			return true
		}
	}
	for _, c := range pod.Spec.EphemeralContainers {
		if c.Name == name {
			return true
		}
	}
	return false
}

// parseLogOptions decodes the kubelet's /containerLogs query into the v1 log options, with
// apimachinery's query conversions (any value but "", "0" and "false" is true; "tail" is the
// old name of tailLines, where "all" means no limit).
func parseLogOptions(q url.Values) (*v1.PodLogOptions, error) {
	if tail := q.Get("tail"); tail != "" {
		q = cloneValues(q)
		q["tailLines"] = []string{tail}
		if tail == "all" {
			delete(q, "tailLines")
		}
	}
	opts := &v1.PodLogOptions{}
	for name, dst := range map[string]*bool{
		"follow": &opts.Follow, "previous": &opts.Previous, "timestamps": &opts.Timestamps,
		"insecureSkipTLSVerifyBackend": &opts.InsecureSkipTLSVerifyBackend,
	} {
		v := q[name]
		if err := runtime.Convert_Slice_string_To_bool(&v, dst, nil); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	for name, dst := range map[string]**int64{
		"sinceSeconds": &opts.SinceSeconds, "tailLines": &opts.TailLines, "limitBytes": &opts.LimitBytes,
	} {
		v := q[name]
		if err := runtime.Convert_Slice_string_To_Pointer_int64(&v, dst, nil); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	if v, ok := q["sinceTime"]; ok {
		if err := metav1.Convert_Slice_string_To_Pointer_v1_Time(&v, &opts.SinceTime, nil); err != nil {
			return nil, fmt.Errorf("sinceTime: %w", err)
		}
		if opts.SinceTime.IsZero() {
			opts.SinceTime = nil
		}
	}
	opts.Container = q.Get("container")
	if v, ok := q["stream"]; ok && len(v) > 0 {
		s := v[0]
		opts.Stream = &s
	}
	return opts, nil
}

func cloneValues(q url.Values) url.Values {
	out := make(url.Values, len(q))
	for k, v := range q {
		out[k] = v
	}
	return out
}

// validateLogOptions applies the API's rules for log options.
func validateLogOptions(o *v1.PodLogOptions) error {
	switch {
	case o.TailLines != nil && *o.TailLines < 0:
		return fmt.Errorf("tailLines must be greater than or equal to 0")
	case o.LimitBytes != nil && *o.LimitBytes < 1:
		return fmt.Errorf("limitBytes must be greater than 0")
	case o.SinceSeconds != nil && o.SinceTime != nil:
		return fmt.Errorf("at most one of sinceTime or sinceSeconds may be specified")
	case o.SinceSeconds != nil && *o.SinceSeconds < 1:
		return fmt.Errorf("sinceSeconds must be greater than 0")
	}
	if o.Stream != nil {
		switch *o.Stream {
		case v1.LogStreamAll, v1.LogStreamStdout, v1.LogStreamStderr:
		default:
			return fmt.Errorf("stream %q is not supported", *o.Stream)
		}
		if *o.Stream != v1.LogStreamAll && o.TailLines != nil {
			return fmt.Errorf("tailLines and a specific stream are mutually exclusive")
		}
	}
	return nil
}
