package provider

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// fakeRuntimeClasses maps RuntimeClass names to handlers; others are NotFound, as the lister
// answers.
type fakeRuntimeClasses map[string]string

func (f fakeRuntimeClasses) LookupRuntimeHandler(name *string) (string, error) {
	if name == nil || *name == "" {
		return "", nil
	}
	h, ok := f[*name]
	if !ok {
		return "", apierrors.NewNotFound(nodev1.Resource("runtimeclass"), *name)
	}
	return h, nil
}

// drainEvents returns the events recorded so far.
func (f *workerFixture) drainEvents() []string {
	var out []string
	for {
		select {
		case e := <-f.events.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// A sandbox is run with its RuntimeClass's handler; when the sandbox cannot be made, the pod
// gets the kubelet's FailedCreatePodSandBox event with the cause in its words and the sync is
// retried after the back-off.
func TestSandboxRuntimeHandlerAndRefusals(t *testing.T) {
	noRuntime := status.Error(codes.Unknown, `failed to get sandbox runtime: no runtime for "nonexistent-handler" is configured`)
	cases := []struct {
		name        string
		class       *string
		hostUsers   *bool
		failRun     error
		wantRun     string // the RunPodSandbox call, "" for none
		wantEvent   string
		wantNoEvent bool
		// existing is the live sandbox of a pod already running: none is to be made.
		existing string
	}{
		{name: "default handler", wantRun: `RunPodSandbox handler=""`,
			wantEvent: "Warning FailedCreatePodSandBox Failed to create pod sandbox: " + errFakeCannotStart.Error()},
		{name: "RuntimeClass for crun", class: ptrTo("fast"), wantRun: `RunPodSandbox handler="crun"`},
		{name: "handler the runtime does not have", class: ptrTo("broken"), failRun: noRuntime,
			wantRun:   `RunPodSandbox handler="nonexistent-handler"`,
			wantEvent: `Warning FailedCreatePodSandBox Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: no runtime for "nonexistent-handler" is configured`},
		{name: "RuntimeClass that does not exist", class: ptrTo("gone"),
			wantEvent: `Warning FailedCreatePodSandBox Failed to create pod sandbox: runtimeclass.node.k8s.io "gone" not found`},
		{name: "hostUsers false on crun", class: ptrTo("fast"), hostUsers: ptrTo(false),
			wantEvent: "Warning FailedCreatePodSandBox Failed to create pod sandbox: can't set `spec.hostUsers: false`, RuntimeClass handler \"crun\" does not support user namespaces"},
		{name: "hostUsers false on the default handler", hostUsers: ptrTo(false), wantRun: `RunPodSandbox handler=""`},
		{name: "running pod whose RuntimeClass went away", class: ptrTo("gone"), existing: "sb-1", wantNoEvent: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := testPod()
			pod.Spec.RuntimeClassName, pod.Spec.HostUsers = tc.class, tc.hostUsers
			f := newWorkerFixture(t, pod, podRuntime{})
			f.p.userns = newUsernsAllocator(t.TempDir(), nil)
			f.p.cfg.RuntimeClasses = fakeRuntimeClasses{"fast": "crun", "broken": "nonexistent-handler"}
			f.p.observeRuntimeStatus(containerd2Status())
			f.runtime.failRunSandbox = tc.failRun
			rec := f.add(pod)
			_, retry := f.p.execute(context.Background(), rec, pod, &podRuntime{}, podActions{CreateSandbox: tc.existing == "", SandboxID: tc.existing, InitToStart: -1})
			if retry != backoffInitial {
				t.Errorf("retry in %v, want the back-off %v", retry, backoffInitial)
			}
			var runs []string
			for _, c := range f.runtime.calls {
				if strings.HasPrefix(c, "RunPodSandbox") {
					runs = append(runs, c)
				}
			}
			switch {
			case tc.wantRun == "" && len(runs) > 0:
				t.Errorf("RunPodSandbox called (%v); the pod must be refused before", runs)
			case tc.wantRun != "" && (len(runs) != 1 || runs[0] != tc.wantRun):
				t.Errorf("runtime calls %v, want %q", runs, tc.wantRun)
			}
			var sandboxEvents []string
			for _, e := range f.drainEvents() {
				if strings.Contains(e, eventFailedSandbox) {
					sandboxEvents = append(sandboxEvents, e)
				}
			}
			if tc.wantNoEvent {
				if len(sandboxEvents) != 0 {
					t.Errorf("events %q, want none", sandboxEvents)
				}
				return
			}
			if len(sandboxEvents) != 1 {
				t.Fatalf("FailedCreatePodSandBox events %q, want one", sandboxEvents)
			}
			if tc.wantEvent != "" && sandboxEvents[0] != tc.wantEvent {
				t.Errorf("event\n %q\nwant\n %q", sandboxEvents[0], tc.wantEvent)
			}
		})
	}
}
