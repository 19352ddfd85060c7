package streaming

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// fakeHost has one pod, "ns/p" with container "c", whose log is "hello\n"; the runtime refuses
// every stream with refuse.
type fakeHost struct {
	refuse error
	logErr error
	// logErrAfterStart fails the log after the zero-byte write that starts the response.
	logErrAfterStart error
	gotOpts          *v1.PodLogOptions
}

func (f *fakeHost) GetPod(_ context.Context, ns, name string) (*v1.Pod, error) {
	if ns != "ns" || name != "p" {
		return nil, errors.New("not on this node")
	}
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: "uid-1"},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c"}}},
	}, nil
}

func (f *fakeHost) ContainerLogs(_ context.Context, _, _, _ string, opts *v1.PodLogOptions, stdout, _ io.Writer) error {
	f.gotOpts = opts
	if f.logErr != nil {
		return f.logErr
	}
	if f.logErrAfterStart != nil {
		if _, err := stdout.Write(nil); err != nil {
			return err
		}
		return f.logErrAfterStart
	}
	_, err := io.WriteString(stdout, "hello\n")
	return err
}

func (f *fakeHost) ExecURL(context.Context, *v1.Pod, types.UID, string, []string, Streams) (*url.URL, error) {
	return nil, f.refuse
}

func (f *fakeHost) RunCommand(_ context.Context, _ *v1.Pod, container string, cmd []string) ([]byte, error) {
	if container != "c" {
		return nil, fmt.Errorf("container not found (%q)", container)
	}
	return []byte(strings.Join(cmd, "|")), nil
}

func (f *fakeHost) AttachURL(context.Context, *v1.Pod, types.UID, string, Streams) (*url.URL, error) {
	return nil, f.refuse
}

func (f *fakeHost) PortForwardURL(context.Context, *v1.Pod, types.UID, []int32) (*url.URL, error) {
	return nil, f.refuse
}

func TestHandlersAnswerAsTheKubelet(t *testing.T) {
	host := &fakeHost{refuse: fmt.Errorf("container not found (%q)", "c")}
	mux := http.NewServeMux()
	Register(mux, host)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	cases := []struct {
		method, path string
		status       int
		body         string
	}{
		{"GET", "/containerLogs/ns/p/c?tailLines=1", 200, "hello\n"},
		{"GET", "/containerLogs/ns/other/c", 404, `pod "other" does not exist`},
		{"GET", "/containerLogs/ns/p/nope", 404, `container "nope" not found in pod "p"`},
		{"GET", "/containerLogs/ns/p/c?tailLines=-1", 422, `{"message": "Invalid request."}`},
		{"GET", "/containerLogs/ns/p/c?sinceTime=yesterday", 400, `{"message": "Unable to decode query."}`},
		{"GET", "/containerLogs/ns/p/c?stream=Stderr", 400, `unable to return the given log stream: "Stderr". Please enable PodLogsQuerySplitStreams feature gate in kubelet`},
		{"POST", "/containerLogs/ns/p/c", 405, ""},
		{"GET", "/containerLogs/ns/p", 404, "404 page not found\n"},
		{"POST", "/exec/ns/p/c?command=true&output=1", 500, `container not found ("c")`},
		{"POST", "/exec/ns/p/uid-1/c?command=true&output=1", 500, `container not found ("c")`},
		{"POST", "/exec/ns/other/c?command=true&output=1", 404, "pod does not exist"},
		// Another pod's UID is the host's to judge (the kubelet's exec ignores it, its attach
		// refuses it with a 500): here the fake host refuses everything.
		{"POST", "/exec/ns/p/uid-2/c?command=true&output=1", 500, `container not found ("c")`},
		{"POST", "/attach/ns/p/uid-2/c?output=1", 500, `container not found ("c")`},
		{"POST", "/attach/ns/p/uid-1/c?output=1", 500, `container not found ("c")`},
		{"POST", "/attach/ns/p/c?output=1", 500, `container not found ("c")`},
		{"POST", "/portForward/ns/p", 500, `container not found ("c")`},
		{"POST", "/portForward/ns/p/uid-2", 404, "pod not found"},
		// /run: POST only, cmd split at spaces, the UID not looked at.
		{"POST", "/run/ns/p/c?cmd=echo+a+b", 200, "echo|a|b"},
		{"POST", "/run/ns/p/uid-2/c?cmd=true", 200, "true"},
		{"POST", "/run/ns/p/nope?cmd=true", 500, `container not found ("nope")`},
		{"POST", "/run/ns/other/c?cmd=true", 404, "pod does not exist"},
		{"GET", "/run/ns/p/c?cmd=true", 405, ""},
	}
	for _, c := range cases {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			req, err := http.NewRequest(c.method, srv.URL+c.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != c.status || (c.body != "" && string(body) != c.body) {
				t.Errorf("got %d %q, want %d %q", resp.StatusCode, body, c.status, c.body)
			}
		})
	}
	if host.gotOpts == nil || host.gotOpts.TailLines == nil || *host.gotOpts.TailLines != 1 {
		t.Errorf("log options reached the host as %+v", host.gotOpts)
	}
}

func TestLogErrorBeforeOutputIsABadRequest(t *testing.T) {
	host := &fakeHost{logErr: errors.New(`previous terminated container "c" in pod "p" not found`)}
	mux := http.NewServeMux()
	Register(mux, host)
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", "/containerLogs/ns/p/c?previous=true", nil))
	if rec.Code != http.StatusBadRequest || rec.Body.String() != host.logErr.Error() {
		t.Errorf("got %d %q", rec.Code, rec.Body.String())
	}
	if !host.gotOpts.Previous {
		t.Error("previous not passed on")
	}
}

// The kubelet starts the response before it looks the instance up: an error after that (a
// previous instance already removed) is the body of a 200 answer.
func TestLogErrorAfterStartIsTheBody(t *testing.T) {
	host := &fakeHost{logErrAfterStart: errors.New("unable to retrieve container logs for containerd://abc")}
	mux := http.NewServeMux()
	Register(mux, host)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/containerLogs/ns/p/c?previous=true")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || string(body) != host.logErrAfterStart.Error() {
		t.Errorf("got %d %q, want 200 %q", resp.StatusCode, body, host.logErrAfterStart.Error())
	}
}
