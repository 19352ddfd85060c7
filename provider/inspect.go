package provider

import (
	"context"
	"fmt"
	"sync"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-cri/vk-cri/cri"
)

// inspector reads pods' state from the runtime. Container statuses of exited containers never
// change, and running ones only change by exiting, so each (ID, state) is asked for once.
type inspector struct {
	rt    *cri.Client
	owner string

	mu        sync.Mutex
	statuses  map[string]*containerState // container ID → last detailed status
	sandboxIP map[string][]string        // sandbox ID → IPs
}

func newInspector(rt *cri.Client, owner string) *inspector {
	return &inspector{rt: rt, owner: owner, statuses: map[string]*containerState{}, sandboxIP: map[string][]string{}}
}

// listAll returns the state of every pod this node owns, keyed by pod UID, and the pod identity
// (namespace, name) found in the labels.
func (in *inspector) listAll(ctx context.Context) (map[string]*podRuntime, map[string]podIdentity, error) {
	return in.list(ctx, map[string]string{cri.OwnerLabel: in.owner})
}

// inspectPod returns one pod's state.
func (in *inspector) inspectPod(ctx context.Context, uid string) (*podRuntime, error) {
	pods, _, err := in.list(ctx, map[string]string{cri.OwnerLabel: in.owner, cri.PodUIDLabel: uid})
	if err != nil {
		return nil, err
	}
	if p, ok := pods[uid]; ok {
		return p, nil
	}
	return &podRuntime{}, nil
}

// podIdentity is what the runtime's labels say about a pod.
type podIdentity struct {
	Namespace, Name, UID string
}

func (in *inspector) list(ctx context.Context, selector map[string]string) (map[string]*podRuntime, map[string]podIdentity, error) {
	sandboxes, err := in.rt.Runtime.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: selector})
	if err != nil {
		return nil, nil, fmt.Errorf("list pod sandboxes: %w", err)
	}
	containers, err := in.rt.Runtime.ListContainers(ctx, &runtimeapi.ContainerFilter{LabelSelector: selector})
	if err != nil {
		return nil, nil, fmt.Errorf("list containers: %w", err)
	}
	pods := map[string]*podRuntime{}
	ids := map[string]podIdentity{}
	get := func(labels map[string]string) *podRuntime {
		uid := labels[cri.PodUIDLabel]
		p, ok := pods[uid]
		if !ok {
			p = &podRuntime{}
			pods[uid] = p
			ids[uid] = podIdentity{Namespace: labels[cri.PodNamespaceLabel], Name: labels[cri.PodNameLabel], UID: uid}
		}
		return p
	}
	live := map[string]bool{}
	for _, s := range sandboxes {
		live[s.Id] = true
		sb := &sandboxState{
			ID:        s.Id,
			Attempt:   s.GetMetadata().GetAttempt(),
			Ready:     s.State == runtimeapi.PodSandboxState_SANDBOX_READY,
			CreatedAt: time.Unix(0, s.CreatedAt),
		}
		if sb.Ready {
			ips, err := in.sandboxIPs(ctx, s.Id)
			if err != nil {
				return nil, nil, err
			}
			sb.IPs = ips
		}
		p := get(s.Labels)
		p.Sandboxes = append(p.Sandboxes, sb)
	}
	for _, c := range containers {
		live[c.Id] = true
		cs, err := in.containerStatus(ctx, c)
		if err != nil {
			return nil, nil, err
		}
		p := get(c.Labels)
		p.Containers = append(p.Containers, cs)
	}
	for _, p := range pods {
		p.sort()
	}
	if len(selector) == 1 {
		in.forget(live)
	}
	return pods, ids, nil
}

func (in *inspector) sandboxIPs(ctx context.Context, id string) ([]string, error) {
	in.mu.Lock()
	ips, ok := in.sandboxIP[id]
	in.mu.Unlock()
	if ok {
		return ips, nil
	}
	resp, err := in.rt.Runtime.PodSandboxStatus(ctx, id, false)
	if cri.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pod sandbox status %s: %w", id, err)
	}
	if n := resp.GetStatus().GetNetwork(); n != nil {
		if n.Ip != "" {
			ips = append(ips, n.Ip)
		}
		for _, extra := range n.AdditionalIps {
			ips = append(ips, extra.Ip)
		}
	}
	in.mu.Lock()
	in.sandboxIP[id] = ips
	in.mu.Unlock()
	return ips, nil
}

func (in *inspector) containerStatus(ctx context.Context, c *runtimeapi.Container) (*containerState, error) {
	in.mu.Lock()
	cached, ok := in.statuses[c.Id]
	in.mu.Unlock()
	if ok && cached.State == c.State {
		return cached, nil
	}
	resp, err := in.rt.Runtime.ContainerStatus(ctx, c.Id, false)
	if err != nil && !cri.IsNotFound(err) {
		return nil, fmt.Errorf("container status %s: %w", c.Id, err)
	}
	cs := &containerState{
		ID:           c.Id,
		Name:         c.GetMetadata().GetName(),
		SandboxID:    c.PodSandboxId,
		Attempt:      c.GetMetadata().GetAttempt(),
		State:        c.State,
		CreatedAt:    time.Unix(0, c.CreatedAt),
		Image:        c.GetImage().GetUserSpecifiedImage(),
		ImageRef:     c.ImageRef,
		Hash:         c.Annotations[cri.ContainerHashAnnotation],
		RestartCount: cri.RestartCount(c.Annotations),
	}
	if st := resp.GetStatus(); st != nil {
		cs.State = st.State
		cs.ExitCode = st.ExitCode
		cs.Reason = st.Reason
		cs.Message = st.Message
		if st.State == runtimeapi.ContainerState_CONTAINER_EXITED {
			cs.Message = in.terminationMessage(ctx, st)
		}
		if st.StartedAt > 0 {
			cs.StartedAt = time.Unix(0, st.StartedAt)
		}
		if st.FinishedAt > 0 {
			cs.FinishedAt = time.Unix(0, st.FinishedAt)
		}
		if st.ImageRef != "" {
			cs.ImageRef = st.ImageRef
		}
		cs.Resources = st.GetResources().GetLinux()
		cs.User = st.GetUser()
	}
	// Only cache answers that agree with the list, so a state change between the two calls
	// is looked at again next time.
	if cs.State == c.State {
		in.mu.Lock()
		in.statuses[c.Id] = cs
		in.mu.Unlock()
	}
	return cs, nil
}

// forgetContainer drops a container's cached status: its resources were just changed.
func (in *inspector) forgetContainer(id string) {
	in.mu.Lock()
	delete(in.statuses, id)
	in.mu.Unlock()
}

// forget drops cached entries of sandboxes and containers the runtime no longer has.
func (in *inspector) forget(live map[string]bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	for id := range in.statuses {
		if !live[id] {
			delete(in.statuses, id)
		}
	}
	for id := range in.sandboxIP {
		if !live[id] {
			delete(in.sandboxIP, id)
		}
	}
}
