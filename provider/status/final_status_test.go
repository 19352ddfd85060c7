package status

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
)

// Container states of the tests below, as the API shows them.
var (
	csRunning = v1.ContainerState{Running: &v1.ContainerStateRunning{}}
	csUnknown = v1.ContainerState{Terminated: &v1.ContainerStateTerminated{Reason: reasonStatusUnknown, Message: messageStatusUnknown, ExitCode: 137}}
)

func csWaiting(reason string) v1.ContainerState {
	return v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: reason}}
}

func csExited(code int32) v1.ContainerState {
	return v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: code}}
}

func cstatus(name string, state v1.ContainerState, last ...v1.ContainerState) v1.ContainerStatus {
	s := v1.ContainerStatus{Name: name, State: state}
	if len(last) > 0 {
		s.LastTerminationState = last[0]
	}
	return s
}

// The kubelet's status manager at the end of a pod's termination (TerminatePod): whether the
// pod had initialised is judged from the pod its pod worker holds, whose status is the API's as
// the deletion delivered it; the status it finishes is the last one generated.
func TestFinalStatus(t *testing.T) {
	i1, i2, side, a := ctr("i1"), ctr("i2"), sidecarCtr("side"), ctr("a")
	withStatus := func(pod *v1.Pod, phase v1.PodPhase, init []v1.ContainerStatus, regular ...v1.ContainerStatus) v1.PodStatus {
		return v1.PodStatus{Phase: phase, InitContainerStatuses: init, ContainerStatuses: regular}
	}
	plain := testPod(withContainers(a))
	initPod := testPod(withInit(i1), withContainers(a))
	twoInit := testPod(withInit(i1, i2), withContainers(a))
	sidecarPod := testPod(withInit(side), withContainers(a))
	started := true
	startedSidecar := cstatus("side", csRunning)
	startedSidecar.Started = &started

	cases := []struct {
		name     string
		pod      *v1.Pod
		seen, st v1.PodStatus
		want     v1.PodStatus
	}{
		{
			name: "no init containers: a container that never ran is terminated unknown, the pod Failed",
			pod:  plain,
			seen: withStatus(plain, v1.PodPending, nil, cstatus("a", csWaiting("ErrImageNeverPull"))),
			st:   withStatus(plain, v1.PodPending, nil, cstatus("a", csWaiting("ContainerCreating"))),
			want: withStatus(plain, v1.PodFailed, nil, cstatus("a", csUnknown)),
		},
		{
			name: "a container that ended keeps its end and the phase stands",
			pod:  plain,
			seen: withStatus(plain, v1.PodRunning, nil, cstatus("a", csRunning)),
			st:   withStatus(plain, v1.PodSucceeded, nil, cstatus("a", csExited(0))),
			want: withStatus(plain, v1.PodSucceeded, nil, cstatus("a", csExited(0))),
		},
		{
			name: "deleted while its init container ran: the init container's exit 0 on SIGTERM does not initialise the pod",
			pod:  initPod,
			seen: withStatus(initPod, v1.PodPending, []v1.ContainerStatus{cstatus("i1", csRunning)}, cstatus("a", csWaiting("PodInitializing"))),
			st:   withStatus(initPod, v1.PodPending, []v1.ContainerStatus{cstatus("i1", csExited(0))}, cstatus("a", csWaiting("PodInitializing"))),
			want: withStatus(initPod, v1.PodFailed, []v1.ContainerStatus{cstatus("i1", csExited(0))}, cstatus("a", csWaiting("PodInitializing"))),
		},
		{
			name: "deleted after the init containers completed: the regular container that never ran is unknown",
			pod:  initPod,
			seen: withStatus(initPod, v1.PodPending, []v1.ContainerStatus{cstatus("i1", csExited(0))}, cstatus("a", csWaiting("PodInitializing"))),
			st:   withStatus(initPod, v1.PodPending, []v1.ContainerStatus{cstatus("i1", csExited(0))}, cstatus("a", csWaiting("ContainerCreating"))),
			want: withStatus(initPod, v1.PodFailed, []v1.ContainerStatus{cstatus("i1", csExited(0))}, cstatus("a", csUnknown)),
		},
		{
			name: "the last init container completed once before (its last state): initialised",
			pod:  initPod,
			seen: withStatus(initPod, v1.PodPending, []v1.ContainerStatus{cstatus("i1", csWaiting("CrashLoopBackOff"), csExited(0))}, cstatus("a", csWaiting("PodInitializing"))),
			st:   withStatus(initPod, v1.PodPending, []v1.ContainerStatus{cstatus("i1", csExited(1), csExited(0))}, cstatus("a", csWaiting("PodInitializing"))),
			want: withStatus(initPod, v1.PodFailed, []v1.ContainerStatus{cstatus("i1", csExited(1), csExited(0))}, cstatus("a", csUnknown)),
		},
		{
			name: "a regular container that ran before: initialised whatever the init containers say",
			pod:  initPod,
			seen: withStatus(initPod, v1.PodRunning, []v1.ContainerStatus{cstatus("i1", csWaiting("PodInitializing"))}, cstatus("a", csWaiting("CrashLoopBackOff"), csExited(1))),
			st:   withStatus(initPod, v1.PodRunning, []v1.ContainerStatus{cstatus("i1", csWaiting("PodInitializing"))}, cstatus("a", csWaiting("ContainerCreating"), csExited(1))),
			want: withStatus(initPod, v1.PodFailed, []v1.ContainerStatus{cstatus("i1", csUnknown)}, cstatus("a", csUnknown, csExited(1))),
		},
		{
			name: "init containers up to the last that started are unknown, those after it stay waiting",
			pod:  twoInit,
			seen: withStatus(twoInit, v1.PodPending, []v1.ContainerStatus{cstatus("i1", csRunning), cstatus("i2", csWaiting("PodInitializing"))}, cstatus("a", csWaiting("PodInitializing"))),
			st:   withStatus(twoInit, v1.PodPending, []v1.ContainerStatus{cstatus("i1", csWaiting("PodInitializing")), cstatus("i2", csWaiting("PodInitializing"))}, cstatus("a", csWaiting("PodInitializing"))),
			want: withStatus(twoInit, v1.PodFailed, []v1.ContainerStatus{cstatus("i1", csUnknown), cstatus("i2", csWaiting("PodInitializing"))}, cstatus("a", csWaiting("PodInitializing"))),
		},
		{
			name: "a started sidecar initialises the pod",
			pod:  sidecarPod,
			seen: withStatus(sidecarPod, v1.PodPending, []v1.ContainerStatus{startedSidecar}, cstatus("a", csWaiting("PodInitializing"))),
			st:   withStatus(sidecarPod, v1.PodPending, []v1.ContainerStatus{cstatus("side", csExited(0))}, cstatus("a", csWaiting("PodInitializing"))),
			want: withStatus(sidecarPod, v1.PodFailed, []v1.ContainerStatus{cstatus("side", csExited(0))}, cstatus("a", csUnknown)),
		},
		{
			name: "a sidecar running but not started yet does not",
			pod:  sidecarPod,
			seen: withStatus(sidecarPod, v1.PodPending, []v1.ContainerStatus{cstatus("side", csRunning)}, cstatus("a", csWaiting("PodInitializing"))),
			st:   withStatus(sidecarPod, v1.PodPending, []v1.ContainerStatus{cstatus("side", csExited(0))}, cstatus("a", csWaiting("PodInitializing"))),
			want: withStatus(sidecarPod, v1.PodFailed, []v1.ContainerStatus{cstatus("side", csExited(0))}, cstatus("a", csWaiting("PodInitializing"))),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := FinalStatus(tc.pod, tc.seen, tc.st)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("final status (-want +got):\n%s", diff)
			}
		})
	}
}
