package eviction

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// emptyDirMessage is the kubelet's eviction message for an emptyDir over its sizeLimit.
const emptyDirMessage = "Usage of EmptyDir volume %q exceeds the limit %q. "

// hasEmptyDirLimit reports whether any pod has an emptyDir with a sizeLimit, the only reason to
// measure the node when no threshold is configured.
func hasEmptyDirLimit(pods []*v1.Pod) bool {
	for _, p := range pods {
		for i := range p.Spec.Volumes {
			if ed := p.Spec.Volumes[i].EmptyDir; ed != nil && ed.SizeLimit != nil && ed.SizeLimit.Sign() > 0 {
				return true
			}
		}
	}
	return false
}

// emptyDirOverLimit lists the pods with an emptyDir volume whose measured usage exceeds its
// sizeLimit, each with the kubelet's message: they are evicted at once, whatever the node's
// pressure (the kubelet's local storage isolation).
func emptyDirOverLimit(pods []*v1.Pod, summary *statsapi.Summary) []candidate {
	used := map[string]map[string]uint64{}
	for i := range summary.Pods {
		ps := &summary.Pods[i]
		byName := map[string]uint64{}
		for _, vs := range ps.VolumeStats {
			if vs.UsedBytes != nil {
				byName[vs.Name] = *vs.UsedBytes
			}
		}
		used[ps.PodRef.UID] = byName
	}
	var out []candidate
	for _, p := range pods {
		for i := range p.Spec.Volumes {
			v := &p.Spec.Volumes[i]
			if v.EmptyDir == nil || v.EmptyDir.SizeLimit == nil || v.EmptyDir.SizeLimit.Sign() <= 0 {
				continue
			}
			u, ok := used[string(p.UID)][v.Name]
			if !ok || resource.NewQuantity(int64(u), resource.BinarySI).Cmp(*v.EmptyDir.SizeLimit) <= 0 {
				continue
			}
			out = append(out, candidate{pod: p, message: fmt.Sprintf(emptyDirMessage, v.Name, v.EmptyDir.SizeLimit.String())})
			break
		}
	}
	return out
}
