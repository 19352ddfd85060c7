// Package gc is the node's garbage collection, as the kubelet's container and image garbage
// collectors do it (pkg/kubelet/container_gc.go, kuberuntime/kuberuntime_gc.go,
// images/image_gc_manager.go).
//
// Container GC (containers.go plans, container_gc.go executes): of each container of a pod, dead
// instances beyond the policy's per-container limit go, oldest first; every dead container and
// inactive sandbox of a pod that no longer exists goes, with its log directory; of a pod that still
// exists, every inactive sandbox but the newest goes. Only what carries this node's owner label
// (cri.OwnerLabel) is ever looked at: several vk-cri nodes may share one runtime.
//
// Image GC (images.go plans, image_gc.go executes): when the image file system's usage reaches
// the high threshold, images no container uses and the runtime does not pin are removed, least
// recently used first, until usage is down to the low threshold; images unused for longer than the
// maximum age go whatever the usage. Every container of the runtime counts as a use, whoever owns
// it.
//
// The eviction manager reclaims through the same collectors before it evicts a pod (Reclaimer).
// Deciding is pure and takes the time as an argument; only Loop reads a clock.
package gc
