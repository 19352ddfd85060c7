package provider

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Headers of the kubelet-managed /etc/hosts, which tools recognise it by.
const (
	managedHostsHeader            = "# Kubernetes-managed hosts file.\n"
	managedHostsHeaderHostNetwork = "# Kubernetes-managed hosts file (host network).\n"
	etcHosts                      = "/etc/hosts"
)

// etcHostsFile is where a pod's hosts file lives on the node: <root-dir>/pods/<uid>/etc-hosts,
// the kubelet's layout.
func etcHostsFile(rootDir string, pod *v1.Pod) string {
	return filepath.Join(rootDir, "pods", string(pod.UID), "etc-hosts")
}

// podHostAndDomain is the pod's short host name and, with a subdomain, its domain
// <subdomain>.<namespace>.svc.<cluster domain>. hostnameOverride replaces both.
func podHostAndDomain(pod *v1.Pod, clusterDomain string) (host, domain string) {
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

// managedHostsContent is the hosts file of a pod with its own network: localhost entries, the
// pod's IPs under its FQDN and short name, then the hostAliases.
func managedHostsContent(podIPs []string, host, domain string, aliases []v1.HostAlias) []byte {
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

// hostNetworkHostsContent is the node's own hosts file under the host-network header, with the
// hostAliases appended.
func hostNetworkHostsContent(nodeHosts []byte, aliases []v1.HostAlias) []byte {
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

// writeEtcHosts writes the pod's hosts file and returns its mount at /etc/hosts, or nil when
// the pod has no IP yet and no host network (the runtime's own file is kept then, as with the
// kubelet). nodeHostsPath is the node's hosts file, copied for host-network pods.
func writeEtcHosts(rootDir, nodeHostsPath string, pod *v1.Pod, podIPs []string, clusterDomain string) (*runtimeapi.Mount, error) {
	if len(podIPs) == 0 && !pod.Spec.HostNetwork {
		return nil, nil
	}
	var content []byte
	if pod.Spec.HostNetwork {
		nodeHosts, err := os.ReadFile(nodeHostsPath)
		if err != nil {
			return nil, fmt.Errorf("reading the node's hosts file: %w", err)
		}
		content = hostNetworkHostsContent(nodeHosts, pod.Spec.HostAliases)
	} else {
		host, domain := podHostAndDomain(pod, clusterDomain)
		content = managedHostsContent(podIPs, host, domain, pod.Spec.HostAliases)
	}
	path := etcHostsFile(rootDir, pod)
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("creating the pod directory: %w", err)
	}
	if err := os.WriteFile(path, content, 0o644); err != nil {
		return nil, fmt.Errorf("writing the pod's hosts file: %w", err)
	}
	// WriteFile keeps an existing file's mode and applies the umask to a new one.
	if err := os.Chmod(path, 0o644); err != nil {
		return nil, fmt.Errorf("writing the pod's hosts file: %w", err)
	}
	return &runtimeapi.Mount{ContainerPath: etcHosts, HostPath: path, SelinuxRelabel: true}, nil
}
