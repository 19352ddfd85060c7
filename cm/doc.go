// Package cm owns the cgroups the kubelet's container manager (pkg/kubelet/cm) owns on a node
// and a container runtime does not: the node-allocatable cgroup <root>/kubepods, the QoS cgroups
// kubepods/burstable and kubepods/besteffort under it (Guaranteed pods sit directly in kubepods),
// and one cgroup per pod, kubepods[/<qos>]/pod<uid>, which the runtime is given as the sandbox's
// cgroup parent and creates the containers' cgroups in.
//
// It computes these cgroups' settings with the kubelet v1.37's rules as pure functions
// (resource_config.go: the pod cgroup's memory limit, CFS quota, cpu shares and pids limit; the
// QoS cgroups' shares; kubepods' node-allocatable limits), names them for the cgroupfs and the
// systemd drivers (names.go), and applies them through a narrow interface, Cgroups, whose
// implementation (cgroupfs.go) writes them with github.com/opencontainers/cgroups as the kubelet
// does, to cgroup v1 or v2 files. Manager (manager.go) is what vk-cri's provider calls: create the
// QoS and pod cgroups before a pod's sandbox, update the pod cgroup around an in-place resize,
// read it back for the pod's status, remove it after the pod's teardown.
package cm
