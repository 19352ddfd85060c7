package provider

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-cri/vk-cri/cri"
)

// sandboxEnv is what the sandbox translation needs to know about the node, not the pod.
type sandboxEnv struct {
	NodeName   string
	PodLogRoot string // the kubelet's /var/log/pods
	CgroupRoot string // parent of the per-QoS cgroups, "/" for the kubelet's layout
	DNS        *runtimeapi.DNSConfig
}

// podLogDir is <root>/<namespace>_<name>_<uid>, the kubelet's layout that log shippers expect.
func podLogDir(root string, pod *v1.Pod) string {
	return filepath.Join(root, fmt.Sprintf("%s_%s_%s", pod.Namespace, pod.Name, pod.UID))
}

// podHostname follows the kubelet: spec.hostname or the pod name, cut to 63 characters and
// without a trailing '-' or '.'; empty for host-network pods, whose UTS namespace is the node's.
func podHostname(pod *v1.Pod) string {
	if pod.Spec.HostNetwork {
		return ""
	}
	name := pod.Name
	switch {
	case pod.Spec.HostnameOverride != nil && *pod.Spec.HostnameOverride != "":
		return *pod.Spec.HostnameOverride
	case pod.Spec.Hostname != "":
		name = pod.Spec.Hostname
	}
	if len(name) > 63 {
		name = strings.TrimRight(name[:63], "-.")
	}
	return name
}

// podCgroupParent is the cgroupfs path of the pod's cgroup: <root>/kubepods[/<qos>]/pod<uid>.
// Guaranteed pods sit directly under kubepods, as with the kubelet.
func podCgroupParent(root string, pod *v1.Pod) string {
	parts := []string{root, "kubepods"}
	switch pod.Status.QOSClass {
	case v1.PodQOSGuaranteed:
	case v1.PodQOSBurstable:
		parts = append(parts, "burstable")
	default:
		parts = append(parts, "besteffort")
	}
	parts = append(parts, "pod"+string(pod.UID))
	return path.Join(parts...)
}

func namespaceOptions(pod *v1.Pod) *runtimeapi.NamespaceOption {
	ns := &runtimeapi.NamespaceOption{
		Network: runtimeapi.NamespaceMode_POD,
		Pid:     runtimeapi.NamespaceMode_CONTAINER,
		Ipc:     runtimeapi.NamespaceMode_POD,
	}
	if pod.Spec.HostNetwork {
		ns.Network = runtimeapi.NamespaceMode_NODE
	}
	if pod.Spec.HostIPC {
		ns.Ipc = runtimeapi.NamespaceMode_NODE
	}
	switch {
	case pod.Spec.HostPID:
		ns.Pid = runtimeapi.NamespaceMode_NODE
	case pod.Spec.ShareProcessNamespace != nil && *pod.Spec.ShareProcessNamespace:
		ns.Pid = runtimeapi.NamespaceMode_POD
	}
	return ns
}

// portMappings lists the container ports that ask for a host port.
func portMappings(pod *v1.Pod) []*runtimeapi.PortMapping {
	var pms []*runtimeapi.PortMapping
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.HostPort <= 0 {
				continue
			}
			proto := runtimeapi.Protocol_TCP
			switch p.Protocol {
			case v1.ProtocolUDP:
				proto = runtimeapi.Protocol_UDP
			case v1.ProtocolSCTP:
				proto = runtimeapi.Protocol_SCTP
			}
			pms = append(pms, &runtimeapi.PortMapping{
				Protocol:      proto,
				ContainerPort: p.ContainerPort,
				HostPort:      p.HostPort,
				HostIp:        p.HostIP,
			})
		}
	}
	return pms
}

func anyPrivileged(pod *v1.Pod) bool {
	for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range list {
			if c.SecurityContext != nil && c.SecurityContext.Privileged != nil && *c.SecurityContext.Privileged {
				return true
			}
		}
	}
	return false
}

// processIdentity is the user and groups a pod's processes run as.
type processIdentity struct {
	user, group *runtimeapi.Int64Value
	groups      []int64
}

// podIdentityOf reads the pod-level identity; fsGroup comes first among the groups, as the
// kubelet orders them.
func podIdentityOf(psc *v1.PodSecurityContext) processIdentity {
	var id processIdentity
	if psc.RunAsUser != nil {
		id.user = &runtimeapi.Int64Value{Value: *psc.RunAsUser}
	}
	if psc.RunAsGroup != nil {
		id.group = &runtimeapi.Int64Value{Value: *psc.RunAsGroup}
	}
	if psc.FSGroup != nil {
		id.groups = append(id.groups, *psc.FSGroup)
	}
	id.groups = append(id.groups, psc.SupplementalGroups...)
	return id
}

// sandboxConfig translates a pod into the CRI sandbox config for the given attempt.
func sandboxConfig(env sandboxEnv, pod *v1.Pod, attempt uint32) *runtimeapi.PodSandboxConfig {
	annotations := make(map[string]string, len(pod.Annotations))
	for k, v := range pod.Annotations {
		annotations[k] = v
	}
	cfg := &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{
			Name:      pod.Name,
			Namespace: pod.Namespace,
			Uid:       string(pod.UID),
			Attempt:   attempt,
		},
		Hostname:     podHostname(pod),
		LogDirectory: podLogDir(env.PodLogRoot, pod),
		DnsConfig:    env.DNS,
		PortMappings: portMappings(pod),
		Labels:       cri.SandboxLabels(pod, env.NodeName),
		Annotations:  annotations,
		Linux: &runtimeapi.LinuxPodSandboxConfig{
			CgroupParent: podCgroupParent(env.CgroupRoot, pod),
			SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
				NamespaceOptions: namespaceOptions(pod),
				Privileged:       anyPrivileged(pod),
			},
		},
	}
	if psc := pod.Spec.SecurityContext; psc != nil {
		sc := cfg.Linux.SecurityContext
		id := podIdentityOf(psc)
		sc.RunAsUser, sc.RunAsGroup, sc.SupplementalGroups = id.user, id.group, id.groups
		if len(psc.Sysctls) > 0 {
			cfg.Linux.Sysctls = make(map[string]string, len(psc.Sysctls))
			for _, s := range psc.Sysctls {
				cfg.Linux.Sysctls[s.Name] = s.Value
			}
		}
	}
	return cfg
}
