package provider

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/vk-cri/vk-cri/provider/translate"
)

// Event reasons and waiting reason of lifecycle hooks, as the kubelet records them.
const (
	eventFailedPostStartHook  = "FailedPostStartHook"
	eventFailedPreStopHook    = "FailedPreStopHook"
	reasonPostStartHookError  = "PostStartHookError"
	hookResponseBodyLimit     = 10 << 10
	hookHTTPUserAgentTemplate = "kube-lifecycle/%s"
)

// hookUserAgentVersion is the kubelet version whose User-Agent httpGet hooks present.
const hookUserAgentVersion = "1.37"

// hookTarget is what a lifecycle handler acts on: one running container instance of a pod.
type hookTarget struct {
	Pod         *v1.Pod
	Container   *v1.Container
	ContainerID string
}

// eventLifecycleHTTPFallback is the kubelet's warning on the pod when an HTTPS hook answered in
// plain HTTP and the retry over HTTP succeeded (pkg/kubelet/lifecycle/handlers.go).
const eventLifecycleHTTPFallback = "LifecycleHTTPFallback"

// hookRunner runs lifecycle handlers. Exec goes through the runtime, httpGet to the pod's
// address, sleep waits; each returns when done or when ctx ends.
type hookRunner struct {
	exec   func(ctx context.Context, containerID string, cmd []string) ([]byte, error)
	podIP  func(ctx context.Context, pod *v1.Pod) (string, error)
	client *http.Client
	// podEvent records an event on the pod (nil: none).
	podEvent func(pod *v1.Pod, eventType, reason, message string)
}

func newHookHTTPClient() *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			// The kubelet does not verify the certificates of the hooks it calls over HTTPS.
			TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // as the kubelet does
			DisableKeepAlives: true,
			Proxy:             nil,
		},
		CheckRedirect: hookRedirectPolicy,
	}
}

// hookMaxRedirects is how many requests a hook makes along redirects of one host, as
// net/http's default policy (the tenth redirect is refused).
const hookMaxRedirects = 10

// hookRedirectPolicy is the kubelet's for lifecycle hooks (its client is built with
// pkg/probe/http's RedirectChecker(false), pkg/kubelet/kubelet.go): a redirect to another host
// (by name or address; the port may differ) is not followed, and the redirect itself is the
// hook's answer, which counts as success as every answer does; one to the same host is
// followed, up to ten requests in all. Without it, a pod's server could make the node fetch any URL the
// node reaches, its loopback included.
func hookRedirectPolicy(req *http.Request, via []*http.Request) error {
	if req.URL.Hostname() != via[0].URL.Hostname() {
		return http.ErrUseLastResponse
	}
	if len(via) >= hookMaxRedirects {
		return fmt.Errorf("stopped after %d redirects", hookMaxRedirects)
	}
	return nil
}

// run executes h for t. The message describes a failure as the kubelet's does; callers must not
// put it into events (it may hold the output of the command).
func (r *hookRunner) run(ctx context.Context, t hookTarget, h *v1.LifecycleHandler) (string, error) {
	pod, c := t.Pod, t.Container
	ref := translate.PodRef(pod)
	switch {
	case h.Exec != nil:
		out, err := r.exec(ctx, t.ContainerID, h.Exec.Command)
		if err != nil {
			return fmt.Sprintf("Exec lifecycle hook (%v) for Container %q in Pod %q failed - error: %v, message: %q", h.Exec.Command, c.Name, ref, err, string(out)), err
		}
		return "", nil
	case h.HTTPGet != nil:
		if err := r.httpGet(ctx, pod, c, h.HTTPGet); err != nil {
			return fmt.Sprintf("HTTP lifecycle hook (%s) for Container %q in Pod %q failed - error: %v", h.HTTPGet.Path, c.Name, ref, err), err
		}
		return "", nil
	case h.Sleep != nil:
		if err := sleepHook(ctx, time.Duration(h.Sleep.Seconds)*time.Second); err != nil {
			return fmt.Sprintf("Sleep lifecycle hook (%d) for Container %q in Pod %q failed - error: %v", h.Sleep.Seconds, c.Name, ref, err), err
		}
		return "", nil
	}
	err := errors.New("invalid handler: no exec, httpGet or sleep action")
	return fmt.Sprintf("Cannot run handler: %v", err), err
}

func sleepHook(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return errors.New("container terminated before sleep hook finished")
	case <-t.C:
		return nil
	}
}

// httpGet calls the hook's URL. Any HTTP answer counts as success (the kubelet does not look at
// the status code of a hook), only a failed request is an error; an HTTPS request answered in
// plain HTTP is retried over HTTP, as the kubelet does.
func (r *hookRunner) httpGet(ctx context.Context, pod *v1.Pod, c *v1.Container, g *v1.HTTPGetAction) error {
	host := g.Host
	if host == "" {
		ip, err := r.podIP(ctx, pod)
		if err != nil {
			return err
		}
		host = ip
	}
	u, err := hookURL(g, c, host)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	req.Header = hookHeaders(g.HTTPHeaders)
	if h := req.Header.Get("Host"); h != "" {
		req.Host = h
	}
	resp, err := r.client.Do(req)
	discardHookResponse(resp)
	if err != nil && u.Scheme == "https" && strings.Contains(err.Error(), "server gave HTTP response to HTTPS client") {
		plain := req.Clone(ctx)
		plain.URL.Scheme = "http"
		plain.Header.Del("Authorization")
		resp, plainErr := r.client.Do(plain)
		discardHookResponse(resp)
		if plainErr == nil {
			err = nil
			if r.podEvent != nil {
				r.podEvent(pod, v1.EventTypeWarning, eventLifecycleHTTPFallback,
					fmt.Sprintf("request to HTTPS lifecycle hook %s got HTTP response, retry with HTTP succeeded", plain.URL.Host))
			}
		}
	}
	return err
}

// discardHookResponse reads at most the hook's body limit of resp and closes it.
func discardHookResponse(resp *http.Response) {
	if resp == nil {
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, hookResponseBodyLimit))
	resp.Body.Close()
}

// hookURL builds the URL of an httpGet action; a named port is looked up in the container's ports.
func hookURL(g *v1.HTTPGetAction, c *v1.Container, host string) (*url.URL, error) {
	port, err := resolvePort(g.Port, c)
	if err != nil {
		return nil, err
	}
	scheme := strings.ToLower(string(g.Scheme))
	if scheme == "" {
		scheme = "http"
	}
	path := g.Path
	if path != "" && !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	u, err := url.Parse(path)
	if err != nil {
		return nil, fmt.Errorf("hook path %q: %w", g.Path, err)
	}
	u.Scheme = scheme
	u.Host = net.JoinHostPort(host, strconv.Itoa(port))
	return u, nil
}

func resolvePort(p intstr.IntOrString, c *v1.Container) (int, error) {
	if p.Type == intstr.Int {
		if p.IntValue() <= 0 || p.IntValue() > 65535 {
			return 0, fmt.Errorf("invalid port number: %d", p.IntValue())
		}
		return p.IntValue(), nil
	}
	for _, cp := range c.Ports {
		if cp.Name == p.StrVal {
			return int(cp.ContainerPort), nil
		}
	}
	if n, err := strconv.Atoi(p.StrVal); err == nil && n > 0 && n <= 65535 {
		return n, nil
	}
	return 0, fmt.Errorf("couldn't find port: %v in %v", p, c.Ports)
}

// hookHeaders are the action's headers over the kubelet's defaults (User-Agent, Accept).
func hookHeaders(in []v1.HTTPHeader) http.Header {
	h := http.Header{}
	for _, hd := range in {
		h.Add(hd.Name, hd.Value)
	}
	if _, ok := h["User-Agent"]; !ok {
		h.Set("User-Agent", fmt.Sprintf(hookHTTPUserAgentTemplate, hookUserAgentVersion))
	}
	if _, ok := h["Accept"]; !ok {
		h.Set("Accept", "*/*")
	}
	return h
}

// newHookRunner wires lifecycle hooks to the provider's runtime and pod addresses.
func (p *Provider) newHookRunner() *hookRunner {
	return &hookRunner{
		exec: p.execForHook, podIP: p.podIPForHook, client: newHookHTTPClient(),
		podEvent: func(pod *v1.Pod, eventType, reason, message string) {
			p.podEvent(pod, eventType, reason, "%s", message)
		},
	}
}

// execForHook runs a command in a container through the runtime, with no timeout of its own
// (the caller's context bounds it), and returns its output, stdout then stderr.
func (p *Provider) execForHook(ctx context.Context, containerID string, cmd []string) ([]byte, error) {
	stdout, stderr, err := p.rt.Runtime.ExecSync(ctx, containerID, cmd, 0)
	return append(stdout, stderr...), err
}

// podIPForHook is the address an httpGet hook without a host calls: the pod's first IP.
func (p *Provider) podIPForHook(ctx context.Context, pod *v1.Pod) (string, error) {
	if pod.Spec.HostNetwork && len(p.cfg.NodeIPs) > 0 {
		return p.cfg.NodeIPs[0], nil
	}
	rt, err := p.inspector.inspectPod(ctx, string(pod.UID))
	if err != nil {
		return "", fmt.Errorf("unable to get pod status, event handlers may be invalid: %w", err)
	}
	if sb := rt.newestSandbox(); sb != nil && len(sb.IPs) > 0 {
		return sb.IPs[0], nil
	}
	return "", errors.New("failed to find networking container: the pod has no IP address")
}
