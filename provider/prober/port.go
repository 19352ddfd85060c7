package prober

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// ResolvePort turns a probe's or hook's port (a number or the name of one of the container's
// ports) into a port number.
func ResolvePort(port intstr.IntOrString, c *v1.Container) (int, error) {
	n := -1
	switch port.Type {
	case intstr.Int:
		n = port.IntValue()
	case intstr.String:
		found := false
		for _, p := range c.Ports {
			if p.Name == port.StrVal {
				n, found = int(p.ContainerPort), true
				break
			}
		}
		if !found {
			return 0, fmt.Errorf("port %q not found", port.StrVal)
		}
	default:
		return n, fmt.Errorf("intOrString had no kind: %+v", port)
	}
	if n <= 0 || n >= 65536 {
		return n, fmt.Errorf("invalid port number: %v", n)
	}
	return n, nil
}
