package eviction

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// evictionMessage explains an eviction in the kubelet's words: the resource, the threshold and
// what was available, and each container using more than it requested.
func evictionMessage(res v1.ResourceName, pod *v1.Pod, ps *statsapi.PodStats, t Threshold, o observation) string {
	msg := fmt.Sprintf("The node was low on resource: %v. ", res)
	msg += fmt.Sprintf("Threshold quantity: %v, available: %v. ", t.value(o.capacity), o.available)
	if ps == nil || (res != v1.ResourceMemory && res != v1.ResourceEphemeralStorage) {
		return msg
	}
	for _, c := range pod.Spec.Containers {
		for _, cs := range ps.Containers {
			if cs.Name != c.Name {
				continue
			}
			var usage *resource.Quantity
			switch res {
			case v1.ResourceMemory:
				if cs.Memory != nil && cs.Memory.WorkingSetBytes != nil {
					usage = bytes(*cs.Memory.WorkingSetBytes)
				}
			case v1.ResourceEphemeralStorage:
				var sum uint64
				if cs.Rootfs != nil && cs.Rootfs.UsedBytes != nil {
					sum += *cs.Rootfs.UsedBytes
				}
				if cs.Logs != nil && cs.Logs.UsedBytes != nil {
					sum += *cs.Logs.UsedBytes
				}
				usage = bytes(sum)
			}
			if usage == nil {
				continue
			}
			req := c.Resources.Requests[res]
			if usage.Cmp(req) > 0 {
				msg += fmt.Sprintf("Container %s was using %s, request is %s, has larger consumption of %v. ", c.Name, usage.String(), req.String(), res)
			}
		}
	}
	return msg
}
