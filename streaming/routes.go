package streaming

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	cristreaming "k8s.io/cri-streaming/pkg/streaming"
)

// Streams says which of a container's streams an exec or attach carries.
type Streams struct {
	Stdin, Stdout, Stderr, TTY bool
}

// Host is what the handlers need from the node: its pods, their logs and the runtime's
// streaming URLs.
type Host interface {
	// GetPod returns a pod of this node; an error for a pod it does not have.
	GetPod(ctx context.Context, namespace, name string) (*v1.Pod, error)
	// ContainerLogs writes a container's log; stdout or stderr may be nil to leave it out.
	ContainerLogs(ctx context.Context, namespace, pod, container string, opts *v1.PodLogOptions, stdout, stderr io.Writer) error
	ExecURL(ctx context.Context, pod *v1.Pod, podUID types.UID, container string, cmd []string, s Streams) (*url.URL, error)
	AttachURL(ctx context.Context, pod *v1.Pod, podUID types.UID, container string, s Streams) (*url.URL, error)
	PortForwardURL(ctx context.Context, pod *v1.Pod, podUID types.UID, ports []int32) (*url.URL, error)
	// RunCommand runs cmd to its end in the pod's running container and returns its stdout
	// then its stderr; a command that exits non-zero is an error along with its output.
	RunCommand(ctx context.Context, pod *v1.Pod, container string, cmd []string) ([]byte, error)
}

// DeclaredFeatures are the node features these handlers provide, in the node's status: the
// API server then passes WebSocket exec, attach and port-forward requests through to the node
// instead of translating them to SPDY itself.
func DeclaredFeatures() []string {
	return []string{"ExtendWebSocketsToKubelet"}
}

// DefaultIdleTimeout is the kubelet's streamingConnectionIdleTimeout.
const DefaultIdleTimeout = 4 * time.Hour

type config struct {
	idleTimeout time.Duration
	log         *logrus.Entry
}

// Option changes how the handlers behave.
type Option func(*config)

// WithIdleTimeout closes an exec, attach or port-forward connection that carried no data in
// either direction for d (0: never).
func WithIdleTimeout(d time.Duration) Option {
	return func(c *config) { c.idleTimeout = d }
}

// WithLogger sets the logger of failed requests.
func WithLogger(l *logrus.Entry) Option {
	return func(c *config) { c.log = l }
}

// Mux is where the routes are attached: an *http.ServeMux, or the kubelet API server's route
// table.
type Mux interface {
	Handle(pattern string, handler http.Handler)
}

// Register attaches the kubelet's /containerLogs/, /exec/, /attach/, /portForward/ and /run/ routes to
// mux. Each prefix is served whole, so that a path of another shape is a 404 here rather than a
// request for whatever else serves the prefix.
func Register(mux Mux, host Host, opts ...Option) {
	c := config{idleTimeout: DefaultIdleTimeout, log: logrus.NewEntry(logrus.StandardLogger())}
	for _, o := range opts {
		o(&c)
	}
	routes := http.NewServeMux()
	logs := &logsHandler{host: host, log: c.log}
	routes.Handle("/containerLogs/{namespace}/{pod}/{container}", onlyMethods(logs, http.MethodGet))

	exec := &remoteCommandHandler{host: host, cfg: c, kind: execCommand}
	attach := &remoteCommandHandler{host: host, cfg: c, kind: attachCommand}
	for _, h := range []*remoteCommandHandler{exec, attach} {
		prefix := "/" + string(h.kind) + "/{namespace}/{pod}"
		routes.Handle(prefix+"/{container}", onlyMethods(h, http.MethodGet, http.MethodPost))
		routes.Handle(prefix+"/{uid}/{container}", onlyMethods(h, http.MethodGet, http.MethodPost))
	}

	pf := &portForwardHandler{host: host, cfg: c}
	routes.Handle("/portForward/{namespace}/{pod}", onlyMethods(pf, http.MethodGet, http.MethodPost))
	routes.Handle("/portForward/{namespace}/{pod}/{uid}", onlyMethods(pf, http.MethodGet, http.MethodPost))

	run := &runHandler{host: host, cfg: c}
	routes.Handle("/run/{namespace}/{pod}/{container}", onlyMethods(run, http.MethodPost))
	routes.Handle("/run/{namespace}/{pod}/{uid}/{container}", onlyMethods(run, http.MethodPost))

	for _, prefix := range []string{"/containerLogs/", "/exec/", "/attach/", "/portForward/", "/run/"} {
		mux.Handle(prefix, routes)
	}
}

// onlyMethods answers 405 to other methods, as the kubelet's router does.
func onlyMethods(h http.Handler, methods ...string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, m := range methods {
			if r.Method == m {
				h.ServeHTTP(w, r)
				return
			}
		}
		w.WriteHeader(http.StatusMethodNotAllowed)
	})
}

// requestedPod looks up the pod a streaming request names; a pod the node does not have is a 404
// with the kubelet's message.
func requestedPod(w http.ResponseWriter, r *http.Request, host Host) (*v1.Pod, bool) {
	pod, err := host.GetPod(r.Context(), r.PathValue("namespace"), r.PathValue("pod"))
	if err != nil {
		writeError(w, http.StatusNotFound, "pod does not exist")
		return nil, false
	}
	return pod, true
}

// refuse answers a stream the runtime would not give a URL for, with the status the kubelet
// derives from the runtime's error.
func (c config) refuse(w http.ResponseWriter, r *http.Request, what string, err error) {
	c.log.WithError(err).WithFields(logrus.Fields{
		"pod": r.PathValue("namespace") + "/" + r.PathValue("pod"), "container": r.PathValue("container"),
	}).Infof("%s refused", what)
	_ = cristreaming.WriteError(err, w)
}

// writeError answers as the kubelet's router does: the status and the bare message.
func writeError(w http.ResponseWriter, status int, msg string) {
	w.WriteHeader(status)
	_, _ = w.Write([]byte(msg))
}
