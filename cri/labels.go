package cri

import (
	"strconv"

	v1 "k8s.io/api/core/v1"
	kubetypes "k8s.io/kubelet/pkg/types"
)

// Label and annotation keys. The io.kubernetes.* keys are the ones the kubelet writes, so that
// crictl users and tools that read them find what they expect.
const (
	PodNameLabel       = kubetypes.KubernetesPodNameLabel
	PodNamespaceLabel  = kubetypes.KubernetesPodNamespaceLabel
	PodUIDLabel        = kubetypes.KubernetesPodUIDLabel
	ContainerNameLabel = kubetypes.KubernetesContainerNameLabel
	// OwnerLabel names the vk-cri node that created a sandbox or container. Everything vk-cri lists
	// is filtered on it, so that it never sees, reports or deletes another agent's sandboxes.
	OwnerLabel = "io.vk-cri.node"

	ContainerHashAnnotation                     = "io.kubernetes.container.hash"
	ContainerRestartCountAnnotation             = "io.kubernetes.container.restartCount"
	ContainerTerminationMessagePathAnnotation   = "io.kubernetes.container.terminationMessagePath"
	ContainerTerminationMessagePolicyAnnotation = "io.kubernetes.container.terminationMessagePolicy"
	PodTerminationGracePeriodAnnotation         = "io.kubernetes.pod.terminationGracePeriod"
)

// SandboxLabels are the pod's own labels plus the kubelet's identity labels and our owner label.
func SandboxLabels(pod *v1.Pod, owner string) map[string]string {
	l := make(map[string]string, len(pod.Labels)+4)
	for k, v := range pod.Labels {
		l[k] = v
	}
	l[PodNameLabel] = pod.Name
	l[PodNamespaceLabel] = pod.Namespace
	l[PodUIDLabel] = string(pod.UID)
	l[OwnerLabel] = owner
	return l
}

// ContainerLabels identify a container's pod, its name in the spec and its owner.
func ContainerLabels(pod *v1.Pod, containerName, owner string) map[string]string {
	return map[string]string{
		PodNameLabel:       pod.Name,
		PodNamespaceLabel:  pod.Namespace,
		PodUIDLabel:        string(pod.UID),
		ContainerNameLabel: containerName,
		OwnerLabel:         owner,
	}
}

// ContainerAnnotations carry what vk-cri must know about a container after a restart.
func ContainerAnnotations(pod *v1.Pod, c *v1.Container, hash string, restartCount int) map[string]string {
	a := map[string]string{
		ContainerHashAnnotation:                     hash,
		ContainerRestartCountAnnotation:             strconv.Itoa(restartCount),
		ContainerTerminationMessagePathAnnotation:   c.TerminationMessagePath,
		ContainerTerminationMessagePolicyAnnotation: string(c.TerminationMessagePolicy),
	}
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		a[PodTerminationGracePeriodAnnotation] = strconv.FormatInt(*pod.Spec.TerminationGracePeriodSeconds, 10)
	}
	return a
}

// RestartCount reads the restart count annotation; 0 when absent or malformed.
func RestartCount(annotations map[string]string) int {
	n, err := strconv.Atoi(annotations[ContainerRestartCountAnnotation])
	if err != nil {
		return 0
	}
	return n
}
