package translate

import (
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// UsernsRequest is what a pod's spec.hostUsers asks of the node, decided by UsernsRequestFor.
type UsernsRequest int

const (
	// UsernsNode: the pod runs in the node's user namespace (hostUsers unset or true).
	UsernsNode UsernsRequest = iota
	// UsernsPod: the pod gets a user namespace of its own, with a range of IDs allocated to it.
	UsernsPod
)

// UsernsRequestFor decides, as the kubelet's UsernsManager.GetOrCreateUserNamespaceMappings
// (pkg/kubelet/userns/userns_manager.go, UserNamespacesSupport locked on since v1.36), whether
// the pod runs in the node's user namespace or in one of its own. A pod with hostUsers: false
// whose handler cannot make one is refused with the kubelet's words: it never runs in the node's
// user namespace instead.
func UsernsRequestFor(pod *v1.Pod, handler string, caps *RuntimeCapabilities) (UsernsRequest, error) {
	if pod.Spec.HostUsers == nil || *pod.Spec.HostUsers {
		return UsernsNode, nil
	}
	ok, err := caps.SupportsUserNamespaces(handler)
	if err == nil && ok {
		return UsernsPod, nil
	}
	msg := "can't set `spec.hostUsers: false`, runtime does not support user namespaces"
	if handler != "" {
		msg = fmt.Sprintf("can't set `spec.hostUsers: false`, RuntimeClass handler %q does not support user namespaces", handler)
	}
	if err != nil {
		return UsernsNode, fmt.Errorf("%s: %w", msg, err)
	}
	return UsernsNode, errors.New(msg)
}

// NodeUserns is the UsernsOptions of a pod in the node's user namespace: the kubelet names the
// mode explicitly for every such pod.
func NodeUserns() *runtimeapi.UserNamespace {
	return &runtimeapi.UserNamespace{Mode: runtimeapi.NamespaceMode_NODE}
}

// IDRange is a pod's range of host IDs.
type IDRange struct {
	First, Length uint32
}

// PodUserns is the UsernsOptions of a pod with its own user namespace: container IDs from 0
// mapped onto the pod's range of host IDs, the same for users and groups.
func PodUserns(r IDRange) *runtimeapi.UserNamespace {
	m := func() []*runtimeapi.IDMapping {
		return []*runtimeapi.IDMapping{{HostId: r.First, ContainerId: 0, Length: r.Length}}
	}
	return &runtimeapi.UserNamespace{Mode: runtimeapi.NamespaceMode_POD, Uids: m(), Gids: m()}
}

// IDMapMounts gives each mount of a container in a pod user namespace the pod's ID mappings, so
// that the runtime makes them idmapped mounts and the pod's root owns what the node's root owns
// in its volumes (kuberuntime_container_linux.go applyPlatformSpecificContainerConfig). Mounts of
// a container in the node's user namespace stay as they are.
func IDMapMounts(cfg *runtimeapi.ContainerConfig) {
	us := cfg.GetLinux().GetSecurityContext().GetNamespaceOptions().GetUsernsOptions()
	if us == nil {
		return
	}
	for _, m := range cfg.Mounts {
		m.UidMappings, m.GidMappings = us.Uids, us.Gids
	}
}
