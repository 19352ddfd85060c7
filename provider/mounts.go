package provider

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// checkMounts refuses containers that mount volumes this version cannot provide, so that a pod
// never runs without data it expects. The service-account token volume that admission adds to
// every pod is the one exception: it is left out (documented as a limitation) rather than
// blocking every pod.
func checkMounts(pod *v1.Pod, c *v1.Container) error {
	for _, m := range c.VolumeMounts {
		var vol *v1.Volume
		for i := range pod.Spec.Volumes {
			if pod.Spec.Volumes[i].Name == m.Name {
				vol = &pod.Spec.Volumes[i]
			}
		}
		if vol == nil {
			return fmt.Errorf("volume mount %q names no volume of the pod", m.Name)
		}
		if vol.Projected != nil && strings.HasPrefix(vol.Name, "kube-api-access-") {
			continue
		}
		return fmt.Errorf("volume %q: volumes are not supported by this version of vk-cri", m.Name)
	}
	return nil
}
