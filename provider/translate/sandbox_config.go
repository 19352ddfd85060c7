package translate

import (
	"fmt"
	"path/filepath"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-cri/vk-cri/cm"
	"github.com/vk-cri/vk-cri/cri"
)

// SandboxEnv is what the sandbox translation needs to know about the node, not the pod.
type SandboxEnv struct {
	NodeName   string
	PodLogRoot string // the kubelet's /var/log/pods
	CgroupRoot string // parent of the per-QoS cgroups, "/" for the kubelet's layout
	// CgroupDriver names the pod's cgroup for the runtime: a cgroupfs path or a systemd slice.
	CgroupDriver cm.Driver
	// ClusterDomain completes the FQDN of pods with a subdomain.
	ClusterDomain string
	DNS           *runtimeapi.DNSConfig
	// Userns is the pod's user namespace (the provider's podUsernsOptions): the node's, or one of its own.
	Userns *runtimeapi.UserNamespace
}

// PodLogDir is <root>/<namespace>_<name>_<uid>, the kubelet's layout that log shippers expect.
func PodLogDir(root string, pod *v1.Pod) string {
	return filepath.Join(root, fmt.Sprintf("%s_%s_%s", pod.Namespace, pod.Name, pod.UID))
}

// podHostname is the sandbox's host name: the short name (spec.hostname or the pod name, cut
// to 63 characters), or with setHostnameAsFQDN and a subdomain the FQDN, at most 64
// characters. Host-network pods have none: their UTS namespace is the node's.
func podHostname(pod *v1.Pod, clusterDomain string) (string, error) {
	if pod.Spec.HostNetwork {
		return "", nil
	}
	host, domain := PodHostAndDomain(pod, clusterDomain)
	if !isTrue(pod.Spec.SetHostnameAsFQDN) || domain == "" {
		return host, nil
	}
	fqdn := host + "." + domain
	if len(fqdn) > 64 {
		return "", fmt.Errorf("failed to construct FQDN from pod hostname and cluster domain, FQDN %s is too long (64 characters is the max, %d characters requested)", fqdn, len(fqdn))
	}
	return fqdn, nil
}

// podCgroupParent is the sandbox's cgroup parent, the pod's cgroup as the kubelet names it to
// the runtime (GetPodCgroupParent: cgroupManager.Name of the pod's cgroup): with cgroupfs the
// path <root>/kubepods[/<qos>]/pod<uid>, with systemd the expanded slice path
// /kubepods.slice/kubepods-<qos>.slice/kubepods-<qos>-pod<uid with '-' as '_'>.slice.
// Guaranteed pods sit directly under kubepods, as with the kubelet.
func podCgroupParent(root string, driver cm.Driver, pod *v1.Pod) (string, error) {
	return driver.Parent(cm.Layout{Root: cm.ParseCgroupfs(root)}.Pod(PodQOS(pod), pod.UID))
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

// SandboxConfig translates a pod into the CRI sandbox config for the given attempt. The
// sandbox itself runs with the runtime's default seccomp profile whatever the pod asks, as with
// the kubelet; sysctls apply to the whole pod.
func SandboxConfig(env SandboxEnv, pod *v1.Pod, attempt uint32) (*runtimeapi.PodSandboxConfig, error) {
	hostname, err := podHostname(pod, env.ClusterDomain)
	if err != nil {
		return nil, err
	}
	cgroupParent, err := podCgroupParent(env.CgroupRoot, env.CgroupDriver, pod)
	if err != nil {
		return nil, err
	}
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
		Hostname:     hostname,
		LogDirectory: PodLogDir(env.PodLogRoot, pod),
		DnsConfig:    env.DNS,
		PortMappings: portMappings(pod),
		Labels:       cri.SandboxLabels(pod, env.NodeName),
		Annotations:  annotations,
		Linux: &runtimeapi.LinuxPodSandboxConfig{
			CgroupParent: cgroupParent,
			SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
				NamespaceOptions: namespaceOptions(pod),
				Privileged:       anyPrivileged(pod),
				Seccomp:          &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault},
			},
			Sysctls: map[string]string{},
		},
	}
	cfg.Linux.SecurityContext.NamespaceOptions.UsernsOptions = env.Userns
	if psc := pod.Spec.SecurityContext; psc != nil {
		sc := cfg.Linux.SecurityContext
		id := podIdentityOf(psc)
		sc.RunAsUser, sc.RunAsGroup, sc.SupplementalGroups = id.user, id.group, id.groups
		if psc.SupplementalGroupsPolicy != nil {
			policy, ok := runtimeapi.SupplementalGroupsPolicy_value[string(*psc.SupplementalGroupsPolicy)]
			if !ok {
				return nil, fmt.Errorf("unsupported supplementalGroupsPolicy: %s", *psc.SupplementalGroupsPolicy)
			}
			sc.SupplementalGroupsPolicy = runtimeapi.SupplementalGroupsPolicy(policy)
		}
		if o := psc.SELinuxOptions; o != nil {
			sc.SelinuxOptions = &runtimeapi.SELinuxOption{User: o.User, Role: o.Role, Type: o.Type, Level: o.Level}
		}
		for _, s := range psc.Sysctls {
			cfg.Linux.Sysctls[s.Name] = s.Value
		}
	}
	return cfg, nil
}
