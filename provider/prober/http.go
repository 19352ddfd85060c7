package prober

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	utilio "k8s.io/utils/io"
)

// KubeletVersion is the kubelet minor version vk-cri behaves as; it appears in User-Agents.
const KubeletVersion = "1.37"

// maxBodyBytes caps how much of a probe's response body is read (and quoted in events).
const maxBodyBytes = 10 << 10

// maxRedirects is how many same-host redirects an httpGet action follows.
const maxRedirects = 10

// UserAgent is the kubelet's User-Agent for a purpose: "kube-probe/1.37" for probes,
// "kube-lifecycle/1.37" for hooks.
func UserAgent(purpose string) string {
	return "kube-" + purpose + "/" + KubeletVersion
}

// NewHTTPGetRequest builds the GET request of an httpGet action as the kubelet does: scheme
// (lower-cased, http by default), host (the pod IP unless the action names one), the container
// port it names, its path (with query) and headers. A User-Agent of kube-<purpose>/1.37 and
// Accept: */* are added unless the action sets them; an Accept header set empty is dropped.
// A Host header sets the request's host.
func NewHTTPGetRequest(action *v1.HTTPGetAction, c *v1.Container, podIP, purpose string) (*http.Request, error) {
	scheme := strings.ToLower(string(action.Scheme))
	if scheme == "" {
		scheme = "http"
	}
	host := action.Host
	if host == "" {
		host = podIP
	}
	port, err := ResolvePort(action.Port, c)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(action.Path)
	if err != nil {
		u = &url.URL{Path: action.Path}
	}
	u.Scheme = scheme
	u.Host = net.JoinHostPort(host, strconv.Itoa(port))

	req, err := http.NewRequest(http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	headers := http.Header{}
	for _, h := range action.HTTPHeaders {
		headers.Add(h.Name, h.Value)
	}
	if _, ok := headers["User-Agent"]; !ok {
		headers.Set("User-Agent", UserAgent(purpose))
	}
	if _, ok := headers["Accept"]; !ok {
		headers.Set("Accept", "*/*")
	} else if headers.Get("Accept") == "" {
		headers.Del("Accept")
	}
	req.Header = headers
	req.Host = headers.Get("Host")
	return req, nil
}

// HTTPClient runs httpGet actions: no keep-alives, no proxy, no compression, TLS without
// verification, redirects followed only to the same host (at most 10).
type HTTPClient struct {
	transport *http.Transport
}

// NewHTTPClient returns a client for httpGet actions; one is shared by every probe.
func NewHTTPClient() *HTTPClient {
	return &HTTPClient{transport: utilnet.SetTransportDefaults(&http.Transport{
		TLSClientConfig:    &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // the kubelet does not verify probe targets
		DisableKeepAlives:  true,
		Proxy:              http.ProxyURL(nil),
		DisableCompression: true,
		DialContext:        dialer().DialContext,
	})}
}

// Do sends the request with a timeout and reads at most 10 KiB of the answer. A status from 200
// to 399 succeeds (a redirect to another host is not followed and gives a warning); any other
// status fails with "HTTP probe failed with statuscode: N"; a transport error fails with its
// text. The returned string is the body on success.
func (c *HTTPClient) Do(req *http.Request, timeout time.Duration) (Outcome, string, error) {
	client := &http.Client{Timeout: timeout, Transport: c.transport, CheckRedirect: sameHostRedirects}
	resp, err := client.Do(req)
	if err != nil {
		return OutcomeFailure, err.Error(), nil
	}
	defer resp.Body.Close()
	b, err := utilio.ReadAtMost(resp.Body, maxBodyBytes)
	if err != nil && !errors.Is(err, utilio.ErrLimitReached) {
		return OutcomeFailure, "", err
	}
	body := string(b)
	switch {
	case resp.StatusCode >= http.StatusOK && resp.StatusCode < http.StatusMultipleChoices:
		return OutcomeSuccess, body, nil
	case resp.StatusCode >= http.StatusMultipleChoices && resp.StatusCode < http.StatusBadRequest:
		return OutcomeWarning, fmt.Sprintf("Probe terminated redirects, Response body: %v", body), nil
	}
	return OutcomeFailure, fmt.Sprintf("HTTP probe failed with statuscode: %d", resp.StatusCode), nil
}

func sameHostRedirects(req *http.Request, via []*http.Request) error {
	if req.URL.Hostname() != via[0].URL.Hostname() {
		return http.ErrUseLastResponse
	}
	if len(via) >= maxRedirects {
		return errors.New("stopped after 10 redirects")
	}
	return nil
}
