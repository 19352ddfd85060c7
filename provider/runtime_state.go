package provider

import (
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// sandboxState is one pod sandbox as the runtime reports it.
type sandboxState struct {
	ID        string
	Attempt   uint32
	Ready     bool
	CreatedAt time.Time
	IPs       []string
}

// containerState is one container instance as the runtime reports it.
type containerState struct {
	ID           string
	Name         string
	SandboxID    string
	Attempt      uint32
	State        runtimeapi.ContainerState
	CreatedAt    time.Time
	StartedAt    time.Time
	FinishedAt   time.Time
	ExitCode     int32
	Reason       string
	Message      string
	Image        string // the image as the pod spec named it
	ImageRef     string // what the runtime resolved it to (digest)
	Hash         string
	RestartCount int
	// Resources are the cgroup settings the runtime reports for the instance (nil: none).
	Resources *runtimeapi.LinuxContainerResources
	// User is the identity the runtime reports the instance's process runs with (nil: none;
	// containerd 2.x reports it, 1.6 does not).
	User *runtimeapi.ContainerUser
}

func (c *containerState) running() bool {
	return c.State == runtimeapi.ContainerState_CONTAINER_RUNNING
}

// podRuntime is everything the runtime holds for one pod UID: the input of computePodActions
// and of status generation. Both lists are kept newest first.
type podRuntime struct {
	Sandboxes  []*sandboxState
	Containers []*containerState
	// Actuated are the resources vk-cri last applied to each container's running instance, by
	// container name (from the allocation store: the runtime does not report memory requests).
	Actuated map[string]v1.ResourceRequirements
}

func (r *podRuntime) sort() {
	sort.SliceStable(r.Sandboxes, func(i, j int) bool { return r.Sandboxes[i].CreatedAt.After(r.Sandboxes[j].CreatedAt) })
	sort.SliceStable(r.Containers, func(i, j int) bool {
		a, b := r.Containers[i], r.Containers[j]
		if a.RestartCount != b.RestartCount {
			return a.RestartCount > b.RestartCount
		}
		return a.CreatedAt.After(b.CreatedAt)
	})
}

// newestSandbox is the sandbox the pod currently lives in, or nil.
func (r *podRuntime) newestSandbox() *sandboxState {
	if r == nil || len(r.Sandboxes) == 0 {
		return nil
	}
	return r.Sandboxes[0]
}

// instances returns the instances of the named container, newest first.
func (r *podRuntime) instances(name string) []*containerState {
	if r == nil {
		return nil
	}
	var out []*containerState
	for _, c := range r.Containers {
		if c.Name == name {
			out = append(out, c)
		}
	}
	return out
}

// latest is the newest instance of the named container, or nil.
func (r *podRuntime) latest(name string) *containerState {
	if r == nil {
		return nil
	}
	for _, c := range r.Containers {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// latestIn is the newest instance of the named container in sandbox sb, or nil.
func (r *podRuntime) latestIn(name, sb string) *containerState {
	if r == nil {
		return nil
	}
	for _, c := range r.Containers {
		if c.Name == name && c.SandboxID == sb {
			return c
		}
	}
	return nil
}
