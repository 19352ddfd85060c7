package provider

import (
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// usernsRequest is what a pod's spec.hostUsers asks of the node, decided by usernsRequestFor.
type usernsRequest int

const (
	// usernsNode: the pod runs in the node's user namespace (hostUsers unset or true).
	usernsNode usernsRequest = iota
	// usernsPod: the pod gets a user namespace of its own, with a range of IDs allocated to it.
	usernsPod
)

// usernsRequestFor decides, as the kubelet's UsernsManager.GetOrCreateUserNamespaceMappings
// (pkg/kubelet/userns/userns_manager.go, UserNamespacesSupport locked on since v1.36), whether
// the pod runs in the node's user namespace or in one of its own. A pod with hostUsers: false
// whose handler cannot make one is refused with the kubelet's words: it never runs in the node's
// user namespace instead.
func usernsRequestFor(pod *v1.Pod, handler string, caps *runtimeCapabilities) (usernsRequest, error) {
	if pod.Spec.HostUsers == nil || *pod.Spec.HostUsers {
		return usernsNode, nil
	}
	ok, err := caps.supportsUserNamespaces(handler)
	if err == nil && ok {
		return usernsPod, nil
	}
	msg := "can't set `spec.hostUsers: false`, runtime does not support user namespaces"
	if handler != "" {
		msg = fmt.Sprintf("can't set `spec.hostUsers: false`, RuntimeClass handler %q does not support user namespaces", handler)
	}
	if err != nil {
		return usernsNode, fmt.Errorf("%s: %w", msg, err)
	}
	return usernsNode, errors.New(msg)
}

// nodeUserns is the UsernsOptions of a pod in the node's user namespace: the kubelet names the
// mode explicitly for every such pod.
func nodeUserns() *runtimeapi.UserNamespace {
	return &runtimeapi.UserNamespace{Mode: runtimeapi.NamespaceMode_NODE}
}

// podUserns is the UsernsOptions of a pod with its own user namespace: container IDs from 0
// mapped onto the pod's range of host IDs, the same for users and groups.
func podUserns(r idRange) *runtimeapi.UserNamespace {
	m := func() []*runtimeapi.IDMapping {
		return []*runtimeapi.IDMapping{{HostId: r.First, ContainerId: 0, Length: r.Length}}
	}
	return &runtimeapi.UserNamespace{Mode: runtimeapi.NamespaceMode_POD, Uids: m(), Gids: m()}
}

// idmapMounts gives each mount of a container in a pod user namespace the pod's ID mappings, so
// that the runtime makes them idmapped mounts and the pod's root owns what the node's root owns
// in its volumes (kuberuntime_container_linux.go applyPlatformSpecificContainerConfig). Mounts of
// a container in the node's user namespace stay as they are.
func idmapMounts(cfg *runtimeapi.ContainerConfig) {
	us := cfg.GetLinux().GetSecurityContext().GetNamespaceOptions().GetUsernsOptions()
	if us == nil {
		return
	}
	for _, m := range cfg.Mounts {
		m.UidMappings, m.GidMappings = us.Uids, us.Gids
	}
}
