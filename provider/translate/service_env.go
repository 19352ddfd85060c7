package translate

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// apiServerService is the service whose variables every pod gets, whatever enableServiceLinks
// says: in-cluster clients find the API server through KUBERNETES_SERVICE_HOST/PORT.
const apiServerService = "kubernetes"

// serviceEnv computes the docker-link style variables of the services a pod in namespace ns
// sees: default/kubernetes always, the namespace's own services when links are enabled. A
// service of the pod's namespace wins over default/kubernetes of the same name.
func serviceEnv(services []*v1.Service, ns string, enableLinks bool) map[string]string {
	visible := map[string]*v1.Service{}
	for _, s := range services {
		if s.Spec.ClusterIP == "" || s.Spec.ClusterIP == v1.ClusterIPNone || len(s.Spec.Ports) == 0 {
			continue
		}
		switch {
		case s.Namespace == ns && enableLinks:
			visible[s.Name] = s
		case s.Namespace == metav1.NamespaceDefault && s.Name == apiServerService:
			if _, taken := visible[s.Name]; !taken {
				visible[s.Name] = s
			}
		}
	}
	out := map[string]string{}
	for _, s := range visible {
		addServiceVars(out, s)
	}
	return out
}

// addServiceVars adds NAME_SERVICE_HOST, NAME_SERVICE_PORT[_PORTNAME] and the link variables
// NAME_PORT, NAME_PORT_<port>_<PROTO>[_PROTO|_PORT|_ADDR] of one service.
func addServiceVars(out map[string]string, s *v1.Service) {
	prefix := envName(s.Name)
	ip := s.Spec.ClusterIP
	out[prefix+"_SERVICE_HOST"] = ip
	out[prefix+"_SERVICE_PORT"] = strconv.Itoa(int(s.Spec.Ports[0].Port))
	for i, p := range s.Spec.Ports {
		port := strconv.Itoa(int(p.Port))
		if p.Name != "" {
			out[prefix+"_SERVICE_PORT_"+envName(p.Name)] = port
		}
		proto := p.Protocol
		if proto == "" {
			proto = v1.ProtocolTCP
		}
		lower := strings.ToLower(string(proto))
		url := fmt.Sprintf("%s://%s", lower, net.JoinHostPort(ip, port))
		if i == 0 {
			out[prefix+"_PORT"] = url
		}
		pp := fmt.Sprintf("%s_PORT_%d_%s", prefix, p.Port, strings.ToUpper(string(proto)))
		out[pp] = url
		out[pp+"_PROTO"] = lower
		out[pp+"_PORT"] = port
		out[pp+"_ADDR"] = ip
	}
}

func envName(s string) string {
	return strings.ToUpper(strings.ReplaceAll(s, "-", "_"))
}
