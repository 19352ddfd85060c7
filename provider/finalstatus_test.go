package provider

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	critest "k8s.io/cri-api/pkg/apis/testing"

	"github.com/vk-cri/vk-cri/cri"
)

// Once the API deleted a pod, the kubelet's status shows no container waiting to be started
// again (its restart check says no for a deleted pod): the first status of its termination, made
// before anything is stopped, shows each container's runtime state instead of why it waited,
// while the phase is still judged as for a pod that runs.
func TestGeneratePodStatusDeleting(t *testing.T) {
	a := ctr("a")
	s1 := sandbox("s1", 0, true)
	crashed := exited(a, "c-a", "s1", 1)
	cases := []struct {
		name      string
		pod       *v1.Pod
		rt        *podRuntime
		reasons   map[string]waitingReason
		running   v1.ContainerState // its state while the pod runs
		deleting  v1.ContainerState // once deleted
		phase     v1.PodPhase       // once deleted
		lastState bool              // whether the deleted status has a last state
	}{
		{
			name:     "an image that may not be pulled: back to the default waiting reason",
			pod:      testPod(withContainers(a), withRestart(v1.RestartPolicyNever)),
			rt:       rtOf(sbs(s1)),
			reasons:  map[string]waitingReason{"a": {Reason: "ErrImageNeverPull", Message: "not present"}},
			running:  v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ErrImageNeverPull", Message: "not present"}},
			deleting: csWaiting("ContainerCreating"),
			phase:    v1.PodPending,
		},
		{
			name:     "a crash loop: the last exit, and the pod still Running under restartPolicy Always",
			pod:      testPod(withContainers(a)),
			rt:       rtOf(sbs(s1), crashed),
			reasons:  map[string]waitingReason{"a": {Reason: "CrashLoopBackOff", Message: "back-off"}},
			running:  v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off"}},
			deleting: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", StartedAt: mt(crashed.StartedAt), FinishedAt: mt(crashed.FinishedAt), ContainerID: "containerd://c-a"}},
			phase:    v1.PodRunning,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := statusIn(tc.pod, tc.rt)
			in.Reasons = tc.reasons
			before := generatePodStatus(in)
			if diff := cmp.Diff(tc.running, before.ContainerStatuses[0].State); diff != "" {
				t.Errorf("state before the deletion (-want +got):\n%s", diff)
			}
			in.Pod = tc.pod.DeepCopy()
			in.Pod.Status = before
			in.Deleting = true
			after := generatePodStatus(in)
			if diff := cmp.Diff(tc.deleting, after.ContainerStatuses[0].State); diff != "" {
				t.Errorf("state once deleted (-want +got):\n%s", diff)
			}
			if after.Phase != tc.phase {
				t.Errorf("phase once deleted %s, want %s", after.Phase, tc.phase)
			}
		})
	}
}

// An ephemeral container whose start failed shows RunContainerError over its StartError while
// the pod runs; once the pod is deleted the kubelet shows the StartError as its state and, from
// its previous status, as its last state too (the last state carried over from the previous
// status, RestartAllContainersOnContainerExits being on by default since v1.36), and keeps both
// to the end of the termination.
func TestEphemeralStartErrorThroughTheDeletion(t *testing.T) {
	a, broken := ctr("a"), ephemeral("broken", "")
	s1 := sandbox("s1", 0, true)
	startErr := exited(asCtr(broken), "c-b", "s1", 128, reason("StartError", "exec: not found"))
	pod := testPod(withContainers(a), withEphemeral(broken))
	reasons := map[string]waitingReason{"broken": {Reason: "RunContainerError", Message: "exec: not found"}}
	startError := v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
		ExitCode: 128, Reason: "StartError", Message: "exec: not found",
		StartedAt: mt(startErr.StartedAt), FinishedAt: mt(startErr.FinishedAt), ContainerID: "containerd://c-b",
	}}
	runErr := v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "RunContainerError", Message: "exec: not found"}}

	steps := []struct {
		name                string
		rt                  *podRuntime
		deleting, terminal  bool
		wantState, wantLast v1.ContainerState
		wantPhase           v1.PodPhase
	}{
		{"while the pod runs", rtOf(sbs(s1), running(a, "c-a", "s1"), startErr), false, false, runErr, startError, v1.PodRunning},
		{"deleted, before anything is stopped", rtOf(sbs(s1), running(a, "c-a", "s1"), startErr), true, false, startError, startError, v1.PodRunning},
		{"once the pod's containers have stopped", rtOf(sbs(sandbox("s1", 0, false)), exited(a, "c-a", "s1", 0), startErr), true, true, startError, startError, v1.PodSucceeded},
	}
	prev := pod.Status
	for _, step := range steps {
		in := statusIn(pod.DeepCopy(), step.rt)
		in.Pod.Status = prev
		in.Reasons = reasons
		in.Deleting, in.Terminal = step.deleting, step.terminal
		st := generatePodStatus(in)
		got := st.EphemeralContainerStatuses[0]
		if diff := cmp.Diff(step.wantState, got.State); diff != "" {
			t.Errorf("%s: state (-want +got):\n%s", step.name, diff)
		}
		if diff := cmp.Diff(step.wantLast, got.LastTerminationState); diff != "" {
			t.Errorf("%s: last state (-want +got):\n%s", step.name, diff)
		}
		if st.Phase != step.wantPhase {
			t.Errorf("%s: phase %s, want %s", step.name, st.Phase, step.wantPhase)
		}
		prev = st
	}
}

// Every failure to make a container's image available records, as with the kubelet, the image
// manager's own event (if any) and then a Failed event "Error: <waiting reason>".
func TestImageFailureEvents(t *testing.T) {
	cases := []struct {
		name       string
		image      string
		policy     v1.PullPolicy
		inBackoff  bool
		inspectErr error
		reason     string
		events     []string
	}{
		{
			name: "pull policy Never, image absent", image: "reg/absent:1.0", policy: v1.PullNever,
			reason: cri.ReasonErrImageNeverPull,
			events: []string{
				`Warning ErrImageNeverPull Container image "reg/absent:1.0" is not present with pull policy of Never`,
				"Warning Failed Error: ErrImageNeverPull",
			},
		},
		{
			name: "pull in back-off", image: "reg/broken:1.0", policy: v1.PullAlways, inBackoff: true,
			reason: cri.ReasonImagePullBackOff,
			events: []string{
				`Normal BackOff Back-off pulling image "reg/broken:1.0"`,
				"Warning Failed Error: ImagePullBackOff",
			},
		},
		{
			name: "invalid image name", image: "reg/UPPER:1.0", policy: v1.PullIfNotPresent,
			reason: cri.ReasonInvalidImageName,
			events: []string{
				`Warning InspectFailed Failed to apply default image tag "reg/UPPER:1.0": couldn't parse image name "reg/UPPER:1.0": invalid reference format: repository name (reg/UPPER) must be lowercase`,
				"Warning Failed Error: InvalidImageName",
			},
		},
		{
			name: "the runtime cannot say whether the image is there", image: "reg/app:1.0", policy: v1.PullIfNotPresent,
			inspectErr: errors.New("runtime down"),
			reason:     cri.ReasonImageInspectError,
			events: []string{
				`Warning InspectFailed Failed to inspect image "": image status of "reg/app:1.0": runtime down`,
				"Warning Failed Error: ImageInspectError",
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			images := critest.NewFakeImageService()
			if tc.inspectErr != nil {
				images.InjectError("ImageStatus", tc.inspectErr)
			}
			rec := record.NewFakeRecorder(10)
			p := New(Config{NodeName: "n"}, &cri.Client{Runtime: critest.NewFakeRuntimeService(), Images: images}, rec, logrus.NewEntry(logrus.New()))
			c := v1.Container{Name: "c", Image: tc.image, ImagePullPolicy: tc.policy}
			pod := testPod(withContainers(c))
			if tc.inBackoff {
				p.pulls.Restarted(string(pod.UID)+"/"+tc.image, time.Now())
			}
			r, err := p.startContainer(context.Background(), pod, &c, false, "sb", nil, rtOf(nil))
			if err == nil || r.Reason != tc.reason {
				t.Fatalf("waiting reason %q (error %v), want %q", r.Reason, err, tc.reason)
			}
			close(rec.Events)
			var got []string
			for e := range rec.Events {
				got = append(got, e)
			}
			if diff := cmp.Diff(tc.events, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func csWaiting(reason string) v1.ContainerState {
	return v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: reason}}
}
