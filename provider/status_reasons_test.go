package provider

import (
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestStatusReasons(t *testing.T) {
	exited := runtimeapi.ContainerState_CONTAINER_EXITED
	running := runtimeapi.ContainerState_CONTAINER_RUNNING
	sandbox := []*sandboxState{{ID: "sb", Ready: true}}
	crashed := &podRuntime{Sandboxes: sandbox, Containers: []*containerState{{ID: "c2", Name: "c", State: exited}}}
	backOff := map[string]waitingReason{"c": {Reason: reasonCrashLoopBackOff}}
	runError := map[string]waitingReason{"c": {Reason: reasonRunContainer}}
	none := map[string]waitingReason{}
	cases := []struct {
		name            string
		before, after   *podRuntime
		previous, fresh map[string]waitingReason
		want            string
	}{
		{
			name:   "a restart after a back-off clears CrashLoopBackOff",
			before: crashed,
			after: &podRuntime{Sandboxes: sandbox, Containers: []*containerState{
				{ID: "c3", Name: "c", State: exited}, {ID: "c2", Name: "c", State: exited}}},
			previous: backOff, fresh: none, want: "",
		},
		{
			name:   "a start that failed shows RunContainerError, not the back-off that preceded it",
			before: crashed,
			after: &podRuntime{Sandboxes: sandbox, Containers: []*containerState{
				{ID: "c3", Name: "c", State: exited}, {ID: "c2", Name: "c", State: exited}}},
			previous: backOff, fresh: runError, want: reasonRunContainer,
		},
		{
			name:     "a container that still runs",
			before:   &podRuntime{Sandboxes: sandbox},
			after:    &podRuntime{Sandboxes: sandbox, Containers: []*containerState{{ID: "c1", Name: "c", State: running}}},
			previous: none, fresh: none, want: "",
		},
		{
			name:     "a new sandbox with a pull that failed shows the pull error",
			before:   &podRuntime{},
			after:    &podRuntime{Sandboxes: sandbox},
			previous: none, fresh: map[string]waitingReason{"c": {Reason: "ErrImagePull"}}, want: "ErrImagePull",
		},
		{
			name:     "nothing changed in the runtime: the previous reasons until the next sync",
			before:   &podRuntime{Sandboxes: sandbox},
			after:    &podRuntime{Sandboxes: sandbox},
			previous: map[string]waitingReason{"c": {Reason: "ErrImagePull"}}, fresh: map[string]waitingReason{"c": {Reason: "ImagePullBackOff"}},
			want: "ErrImagePull",
		},
		{
			name:     "a sandbox that stopped is a change",
			before:   &podRuntime{Sandboxes: sandbox},
			after:    &podRuntime{Sandboxes: []*sandboxState{{ID: "sb"}}},
			previous: backOff, fresh: none, want: "",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := statusReasons(c.before, c.after, c.previous, c.fresh)["c"].Reason
			if got != c.want {
				t.Errorf("reason %q, want %q", got, c.want)
			}
		})
	}
}
