package eviction

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// The kubelet's messages for pods over their own local storage limits (eviction/helpers.go).
const (
	emptyDirMessage           = "Usage of EmptyDir volume %q exceeds the limit %q. "
	podEphemeralMessage       = "Pod ephemeral local storage usage exceeds the total limit of containers %s. "
	containerEphemeralMessage = "Container %s exceeded its local ephemeral storage limit %q. "
)

// hasLocalStorageLimit reports whether any pod limits its local storage (an emptyDir
// sizeLimit, an ephemeral-storage limit), the only reason to measure the node when no
// threshold is configured.
func hasLocalStorageLimit(pods []*v1.Pod) bool {
	for _, p := range pods {
		for i := range p.Spec.Volumes {
			if ed := p.Spec.Volumes[i].EmptyDir; ed != nil && ed.SizeLimit != nil && ed.SizeLimit.Sign() > 0 {
				return true
			}
		}
		if _, ok := resourcehelper.PodLimits(p, resourcehelper.PodResourcesOptions{})[v1.ResourceEphemeralStorage]; ok {
			return true
		}
	}
	return false
}

// localStorageOverLimit lists the pods over their own local storage limits, each with the
// kubelet's message, checked in the kubelet's order (localStorageEviction): an emptyDir over its
// sizeLimit, then the pod's ephemeral storage over the sum of its containers' limits, then a
// container's logs (and writable layer, unless the image file system is a separate one) over its
// own limit. They are evicted at once, whatever the node's pressure.
func localStorageOverLimit(pods []*v1.Pod, summary *statsapi.Summary, dedicatedImageFs bool) []candidate {
	stats := map[string]*statsapi.PodStats{}
	for i := range summary.Pods {
		stats[summary.Pods[i].PodRef.UID] = &summary.Pods[i]
	}
	var out []candidate
	for _, p := range pods {
		ps, ok := stats[string(p.UID)]
		if !ok {
			continue
		}
		for _, check := range []func(*v1.Pod, *statsapi.PodStats) string{
			emptyDirOverLimit,
			podEphemeralOverLimit,
			func(p *v1.Pod, ps *statsapi.PodStats) string {
				return containerEphemeralOverLimit(p, ps, dedicatedImageFs)
			},
		} {
			if msg := check(p, ps); msg != "" {
				out = append(out, candidate{pod: p, message: msg, grace: hardEvictionGrace})
				break
			}
		}
	}
	return out
}

// emptyDirOverLimit: the first emptyDir volume whose measured usage exceeds its sizeLimit.
func emptyDirOverLimit(p *v1.Pod, ps *statsapi.PodStats) string {
	used := map[string]uint64{}
	for _, vs := range ps.VolumeStats {
		if vs.UsedBytes != nil {
			used[vs.Name] = *vs.UsedBytes
		}
	}
	for i := range p.Spec.Volumes {
		v := &p.Spec.Volumes[i]
		if v.EmptyDir == nil || v.EmptyDir.SizeLimit == nil || v.EmptyDir.SizeLimit.Sign() <= 0 {
			continue
		}
		u, ok := used[v.Name]
		if !ok || bytes(u).Cmp(*v.EmptyDir.SizeLimit) <= 0 {
			continue
		}
		return fmt.Sprintf(emptyDirMessage, v.Name, v.EmptyDir.SizeLimit.String())
	}
	return ""
}

// podEphemeralOverLimit: the pod's ephemeral storage (writable layers, logs, local volumes)
// exceeds its limit (the sum of its containers', component-helpers' PodLimits).
func podEphemeralOverLimit(p *v1.Pod, ps *statsapi.PodStats) string {
	limit, ok := resourcehelper.PodLimits(p, resourcehelper.PodResourcesOptions{})[v1.ResourceEphemeralStorage]
	if !ok {
		return ""
	}
	used := resource.Quantity{}
	if ps.EphemeralStorage != nil && ps.EphemeralStorage.UsedBytes != nil {
		used = *bytes(*ps.EphemeralStorage.UsedBytes)
	}
	if used.Cmp(limit) > 0 {
		return fmt.Sprintf(podEphemeralMessage, limit.String())
	}
	return ""
}

// containerEphemeralOverLimit: a container (or restartable init container) whose logs, and
// writable layer on a node without a separate image file system, exceed its own limit.
func containerEphemeralOverLimit(p *v1.Pod, ps *statsapi.PodStats, dedicatedImageFs bool) string {
	limits := map[string]resource.Quantity{}
	add := func(c *v1.Container) {
		if l, ok := c.Resources.Limits[v1.ResourceEphemeralStorage]; ok && l.Value() != 0 {
			limits[c.Name] = l
		}
	}
	for i := range p.Spec.Containers {
		add(&p.Spec.Containers[i])
	}
	for i := range p.Spec.InitContainers {
		if c := &p.Spec.InitContainers[i]; c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
			add(c)
		}
	}
	for _, cs := range ps.Containers {
		limit, ok := limits[cs.Name]
		if !ok {
			continue
		}
		used := fsUsed(cs.Logs)
		if !dedicatedImageFs {
			used.Add(fsUsed(cs.Rootfs))
		}
		if limit.Cmp(used) < 0 {
			return fmt.Sprintf(containerEphemeralMessage, cs.Name, limit.String())
		}
	}
	return ""
}

func fsUsed(fs *statsapi.FsStats) resource.Quantity {
	if fs == nil || fs.UsedBytes == nil {
		return resource.Quantity{}
	}
	return *bytes(*fs.UsedBytes)
}
