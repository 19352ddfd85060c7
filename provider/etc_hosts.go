package provider

import (
	"fmt"
	"os"
	"path/filepath"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-cri/vk-cri/provider/translate"
)

// etcHosts is where a container sees the pod's hosts file.
const etcHosts = "/etc/hosts"

// etcHostsFile is where a pod's hosts file lives on the node: <root-dir>/pods/<uid>/etc-hosts,
// the kubelet's layout.
func etcHostsFile(rootDir string, pod *v1.Pod) string {
	return filepath.Join(rootDir, "pods", string(pod.UID), "etc-hosts")
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
		content = translate.HostNetworkHostsContent(nodeHosts, pod.Spec.HostAliases)
	} else {
		host, domain := translate.PodHostAndDomain(pod, clusterDomain)
		content = translate.ManagedHostsContent(podIPs, host, domain, pod.Spec.HostAliases)
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
