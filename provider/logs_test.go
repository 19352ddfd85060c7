package provider

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestReaderOptions(t *testing.T) {
	now := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	cases := []struct {
		name      string
		in        v1.PodLogOptions
		wantSince time.Time
	}{
		{"nothing", v1.PodLogOptions{}, time.Time{}},
		{"since seconds", v1.PodLogOptions{SinceSeconds: ptr.To[int64](90)}, now.Add(-90 * time.Second)},
		{"since time", v1.PodLogOptions{SinceTime: &metav1.Time{Time: now.Add(-time.Hour)}}, now.Add(-time.Hour)},
		{"the later of both wins", v1.PodLogOptions{SinceSeconds: ptr.To[int64](60), SinceTime: &metav1.Time{Time: now.Add(-time.Hour)}}, now.Add(-time.Minute)},
		{"a later since time wins", v1.PodLogOptions{SinceSeconds: ptr.To[int64](7200), SinceTime: &metav1.Time{Time: now.Add(-time.Hour)}}, now.Add(-time.Hour)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := readerOptions(&c.in, now)
			if !got.Since.Equal(c.wantSince) {
				t.Errorf("since = %v, want %v", got.Since, c.wantSince)
			}
		})
	}
	full := readerOptions(&v1.PodLogOptions{Follow: true, Timestamps: true, TailLines: ptr.To[int64](3), LimitBytes: ptr.To[int64](100)}, now)
	if !full.Follow || !full.Timestamp || *full.TailLines != 3 || *full.LimitBytes != 100 {
		t.Errorf("options not carried over: %+v", full)
	}
}

func TestLogContainerID(t *testing.T) {
	running := v1.ContainerState{Running: &v1.ContainerStateRunning{}}
	lastExited := v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ContainerID: "containerd://old"}}
	cases := []struct {
		name     string
		status   v1.ContainerStatus
		previous bool
		wantID   string
		wantErr  string
	}{
		{"running", v1.ContainerStatus{Name: "c", ContainerID: "containerd://cur", State: running}, false, "containerd://cur", ""},
		{"previous", v1.ContainerStatus{Name: "c", ContainerID: "containerd://cur", State: running, LastTerminationState: lastExited}, true, "containerd://old", ""},
		{"no previous", v1.ContainerStatus{Name: "c", ContainerID: "containerd://cur", State: running}, true, "",
			`previous terminated container "c" in pod "p" not found`},
		{"terminated", v1.ContainerStatus{Name: "c", State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ContainerID: "containerd://done"}}}, false, "containerd://done", ""},
		{"terminated without an ID shows the last instance", v1.ContainerStatus{Name: "c", State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{}}, LastTerminationState: lastExited}, false, "containerd://old", ""},
		{"terminated without any ID", v1.ContainerStatus{Name: "c", State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{}}}, false, "",
			`container "c" in pod "p" is terminated`},
		{"crash loop shows the last instance", v1.ContainerStatus{Name: "c", State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}, LastTerminationState: lastExited}, false, "containerd://old", ""},
		{"image pull", v1.ContainerStatus{Name: "c", State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ErrImagePull"}}}, false, "",
			`container "c" in pod "p" is waiting to start: image can't be pulled`},
		{"image pull back-off", v1.ContainerStatus{Name: "c", State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ImagePullBackOff"}}}, false, "",
			`container "c" in pod "p" is waiting to start: trying and failing to pull image`},
		{"creating", v1.ContainerStatus{Name: "c", State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ContainerCreating"}}}, false, "",
			`container "c" in pod "p" is waiting to start: ContainerCreating`},
		{"no state", v1.ContainerStatus{Name: "c"}, false, "",
			`container "c" in pod "p" is waiting to start - no logs yet`},
		{"unknown container", v1.ContainerStatus{Name: "other", State: running}, false, "",
			`container "c" in pod "p" is not available`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := &v1.PodStatus{InitContainerStatuses: []v1.ContainerStatus{c.status}}
			id, err := logContainerID("p", st, "c", c.previous)
			if c.wantErr != "" {
				if err == nil || err.Error() != c.wantErr {
					t.Fatalf("error %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil || id != c.wantID {
				t.Fatalf("got %q, %v; want %q", id, err, c.wantID)
			}
		})
	}
}
