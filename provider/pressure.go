package provider

import (
	v1 "k8s.io/api/core/v1"
)

// pressureText is what the kubelet writes in a pressure condition, when True and when False.
var pressureText = map[v1.NodeConditionType][2][2]string{
	v1.NodeMemoryPressure: {
		{"KubeletHasSufficientMemory", "kubelet has sufficient memory available"},
		{"KubeletHasInsufficientMemory", "kubelet has insufficient memory available"},
	},
	v1.NodeDiskPressure: {
		{"KubeletHasNoDiskPressure", "kubelet has no disk pressure"},
		{"KubeletHasDiskPressure", "kubelet has disk pressure"},
	},
	v1.NodePIDPressure: {
		{"KubeletHasSufficientPID", "kubelet has sufficient PID available"},
		{"KubeletHasInsufficientPID", "kubelet has insufficient PID available"},
	},
}

// withPressure sets the pressure conditions from the eviction manager's view (nil: no
// measurements, all clear).
func withPressure(conds []v1.NodeCondition, pressure map[v1.NodeConditionType]bool) []v1.NodeCondition {
	for i := range conds {
		text, ok := pressureText[conds[i].Type]
		if !ok {
			continue
		}
		idx := 0
		conds[i].Status = v1.ConditionFalse
		if pressure[conds[i].Type] {
			idx = 1
			conds[i].Status = v1.ConditionTrue
		}
		conds[i].Reason, conds[i].Message = text[idx][0], text[idx][1]
	}
	return conds
}
