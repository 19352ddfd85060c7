package translate

import (
	"bytes"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// Headers of the kubelet-managed /etc/hosts, which tools recognise it by.
const (
	managedHostsHeader            = "# Kubernetes-managed hosts file.\n"
	managedHostsHeaderHostNetwork = "# Kubernetes-managed hosts file (host network).\n"
)

// PodHostAndDomain is the pod's short host name and, with a subdomain, its domain
// <subdomain>.<namespace>.svc.<cluster domain>. hostnameOverride replaces both.
func PodHostAndDomain(pod *v1.Pod, clusterDomain string) (host, domain string) {
	if o := pod.Spec.HostnameOverride; o != nil && *o != "" {
		return truncateHostname(*o), ""
	}
	host = pod.Name
	if pod.Spec.Hostname != "" {
		host = pod.Spec.Hostname
	}
	host = truncateHostname(host)
	if pod.Spec.Subdomain != "" {
		domain = fmt.Sprintf("%s.%s.svc.%s", pod.Spec.Subdomain, pod.Namespace, clusterDomain)
	}
	return host, domain
}

// truncateHostname cuts a host name to 63 characters without a trailing '-' or '.'.
func truncateHostname(name string) string {
	if len(name) <= 63 {
		return name
	}
	return strings.TrimRight(name[:63], "-.")
}

// ManagedHostsContent is the hosts file of a pod with its own network: localhost entries, the
// pod's IPs under its FQDN and short name, then the hostAliases.
func ManagedHostsContent(podIPs []string, host, domain string, aliases []v1.HostAlias) []byte {
	var b bytes.Buffer
	b.WriteString(managedHostsHeader)
	b.WriteString("127.0.0.1\tlocalhost\n")
	b.WriteString("::1\tlocalhost ip6-localhost ip6-loopback\n")
	b.WriteString("fe00::0\tip6-localnet\n")
	b.WriteString("fe00::0\tip6-mcastprefix\n")
	b.WriteString("fe00::1\tip6-allnodes\n")
	b.WriteString("fe00::2\tip6-allrouters\n")
	for _, ip := range podIPs {
		if domain != "" {
			fmt.Fprintf(&b, "%s\t%s.%s\t%s\n", ip, host, domain, host)
		} else {
			fmt.Fprintf(&b, "%s\t%s\n", ip, host)
		}
	}
	b.Write(hostAliasEntries(aliases))
	return b.Bytes()
}

// HostNetworkHostsContent is the node's own hosts file under the host-network header, with the
// hostAliases appended.
func HostNetworkHostsContent(nodeHosts []byte, aliases []v1.HostAlias) []byte {
	var b bytes.Buffer
	b.WriteString(managedHostsHeaderHostNetwork)
	b.Write(nodeHosts)
	b.Write(hostAliasEntries(aliases))
	return b.Bytes()
}

func hostAliasEntries(aliases []v1.HostAlias) []byte {
	if len(aliases) == 0 {
		return nil
	}
	var b bytes.Buffer
	b.WriteString("\n# Entries added by HostAliases.\n")
	for _, a := range aliases {
		fmt.Fprintf(&b, "%s\t%s\n", a.IP, strings.Join(a.Hostnames, "\t"))
	}
	return b.Bytes()
}
