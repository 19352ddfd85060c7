// Package translate turns a pod's spec into what the CRI runtime is asked for: the sandbox
// config (hostname, namespaces, ports, DNS, cgroup parent, sysctls, security), each container's
// config (command and args with $(VAR) expanded, env, mounts, labels and annotations, Linux
// resources and security context), and the pieces they are made of: the environment (envFrom,
// valueFrom, service variables), the DNS configuration composed from the node's resolv.conf, the
// content of the pod's /etc/hosts, the user namespace options and the recursive read-only mounts
// a runtime handler allows.
//
// It mirrors the kubelet's pkg/kubelet/kuberuntime (kuberuntime_sandbox.go
// generatePodSandboxConfig, kuberuntime_container.go generateContainerConfig,
// kuberuntime_container_linux.go, security_context.go), with the parts of kubelet_pods.go
// (makeEnvironmentVariables, makeMounts' hosts file and recursive read-only rules),
// pkg/kubelet/network/dns and pkg/kubelet/userns the translation reads.
//
// Everything here is a function of its inputs: the pod, the node's facts (NodeFacts,
// SandboxEnv) and the runtime's reported capabilities (RuntimeCapabilities). It holds no state,
// calls no runtime and writes nothing; the only reads are the node's resolv.conf (DNSSource) and
// ConfigMaps and Secrets through the ObjectReader it is given. The golden files in
// testdata/sandbox and testdata/container pin the configs it produces (go test
// ./provider/translate -run Golden -update rewrites them; see internal/golden).
package translate
