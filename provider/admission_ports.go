package provider

import (
	v1 "k8s.io/api/core/v1"
)

// bindAllHostIP is the host IP a host port without one binds, which conflicts with every IP.
const bindAllHostIP = "0.0.0.0"

// hostPortKey is one host port as the scheduler keys it: protocol and port (an empty protocol
// is TCP).
type hostPortKey struct {
	Protocol v1.Protocol
	Port     int32
}

// hostPortsInUse are the host ports the node's admitted pods hold, by host IP: the scheduler's
// HostPortInfo (k8s.io/kube-scheduler/framework), written here because that package pulls in
// the scheduler's whole framework (DRA, CEL) for a map.
type hostPortsInUse map[string]map[hostPortKey]bool

// podHostPorts are the ports a pod binds on the host: those with a hostPort of its containers
// and of its restartable init containers (sidecars, which run as long as the pod), as the
// scheduler's GetHostPorts lists them; other init containers end before the pod runs.
func podHostPorts(pod *v1.Pod) []v1.ContainerPort {
	var out []v1.ContainerPort
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy == nil || *c.RestartPolicy != v1.ContainerRestartPolicyAlways {
			continue
		}
		for _, p := range c.Ports {
			if p.HostPort > 0 {
				out = append(out, p)
			}
		}
	}
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.HostPort > 0 {
				out = append(out, p)
			}
		}
	}
	return out
}

func hostPortOf(p v1.ContainerPort) (string, hostPortKey) {
	ip, protocol := p.HostIP, p.Protocol
	if ip == "" {
		ip = bindAllHostIP
	}
	if protocol == "" {
		protocol = v1.ProtocolTCP
	}
	return ip, hostPortKey{Protocol: protocol, Port: p.HostPort}
}

// usedHostPorts collects the host ports of the given pods.
func usedHostPorts(pods []*v1.Pod) hostPortsInUse {
	used := hostPortsInUse{}
	for _, pod := range pods {
		for _, p := range podHostPorts(pod) {
			ip, key := hostPortOf(p)
			if used[ip] == nil {
				used[ip] = map[hostPortKey]bool{}
			}
			used[ip][key] = true
		}
	}
	return used
}

// conflicts tells whether a port is taken: on 0.0.0.0 by the same protocol and port on any IP;
// on another IP by the same on that IP or on 0.0.0.0 (HostPortInfo.CheckConflict).
func (u hostPortsInUse) conflicts(p v1.ContainerPort) bool {
	ip, key := hostPortOf(p)
	if ip == bindAllHostIP {
		for _, ports := range u {
			if ports[key] {
				return true
			}
		}
		return false
	}
	return u[bindAllHostIP][key] || u[ip][key]
}

// hostPortsFit is the scheduler's NodePorts filter: none of the pod's host ports is taken by an
// admitted pod (the pod's own ports are not checked against each other).
func hostPortsFit(pod *v1.Pod, others []*v1.Pod) bool {
	want := podHostPorts(pod)
	if len(want) == 0 {
		return true
	}
	used := usedHostPorts(others)
	for _, p := range want {
		if used.conflicts(p) {
			return false
		}
	}
	return true
}
