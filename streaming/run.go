package streaming

import (
	"net/http"
	"strings"
)

// runHandler serves the kubelet's /run/{namespace}/{pod}[/{uid}]/{container}?cmd=...: the
// command (cmd split at spaces, the kubelet's legacy form) runs to its end in the container
// and the answer is its stdout then its stderr (server.go getRun, kuberuntime RunInContainer).
// As for exec, a UID in the path is not looked at: the named pod's container runs it.
type runHandler struct {
	host Host
	cfg  config
}

func (h *runHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	pod, ok := requestedPod(w, r, h.host)
	if !ok {
		return
	}
	cmd := strings.Split(r.URL.Query().Get("cmd"), " ")
	out, err := h.host.RunCommand(r.Context(), pod, r.PathValue("container"), cmd)
	if err != nil {
		h.cfg.log.WithError(err).WithFields(map[string]any{"pod": pod.Namespace + "/" + pod.Name, "container": r.PathValue("container")}).Info("run refused or failed")
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	if out != nil {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
}
