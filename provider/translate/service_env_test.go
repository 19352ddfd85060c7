package translate

import (
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func svc(ns, name, ip string, ports ...v1.ServicePort) *v1.Service {
	return &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1.ServiceSpec{ClusterIP: ip, Ports: ports}}
}

func TestServiceEnv(t *testing.T) {
	services := []*v1.Service{
		svc("default", "kubernetes", "10.0.0.1", v1.ServicePort{Name: "https", Port: 443, Protocol: v1.ProtocolTCP}),
		svc("app", "my-backend", "10.0.0.7", v1.ServicePort{Name: "http", Port: 8080}, v1.ServicePort{Port: 53, Protocol: v1.ProtocolUDP}),
		svc("app", "headless", v1.ClusterIPNone, v1.ServicePort{Port: 80}),
		svc("app", "external", "", v1.ServicePort{Port: 80}),
		svc("other", "elsewhere", "10.0.0.9", v1.ServicePort{Port: 80}),
		svc("default", "not-api", "10.0.0.10", v1.ServicePort{Port: 80}),
		svc("app", "v6", "fd00::1", v1.ServicePort{Port: 80}),
	}
	kube := map[string]string{
		"KUBERNETES_SERVICE_HOST":       "10.0.0.1",
		"KUBERNETES_SERVICE_PORT":       "443",
		"KUBERNETES_SERVICE_PORT_HTTPS": "443",
		"KUBERNETES_PORT":               "tcp://10.0.0.1:443",
		"KUBERNETES_PORT_443_TCP":       "tcp://10.0.0.1:443",
		"KUBERNETES_PORT_443_TCP_PROTO": "tcp",
		"KUBERNETES_PORT_443_TCP_PORT":  "443",
		"KUBERNETES_PORT_443_TCP_ADDR":  "10.0.0.1",
	}
	if got := serviceEnv(services, "app", false); !reflect.DeepEqual(got, kube) {
		t.Errorf("links disabled: got %v, want %v", got, kube)
	}
	got := serviceEnv(services, "app", true)
	want := map[string]string{
		"MY_BACKEND_SERVICE_HOST":        "10.0.0.7",
		"MY_BACKEND_SERVICE_PORT":        "8080",
		"MY_BACKEND_SERVICE_PORT_HTTP":   "8080",
		"MY_BACKEND_PORT":                "tcp://10.0.0.7:8080",
		"MY_BACKEND_PORT_8080_TCP":       "tcp://10.0.0.7:8080",
		"MY_BACKEND_PORT_8080_TCP_PROTO": "tcp",
		"MY_BACKEND_PORT_8080_TCP_PORT":  "8080",
		"MY_BACKEND_PORT_8080_TCP_ADDR":  "10.0.0.7",
		"MY_BACKEND_PORT_53_UDP":         "udp://10.0.0.7:53",
		"MY_BACKEND_PORT_53_UDP_PROTO":   "udp",
		"MY_BACKEND_PORT_53_UDP_PORT":    "53",
		"MY_BACKEND_PORT_53_UDP_ADDR":    "10.0.0.7",
		"V6_SERVICE_HOST":                "fd00::1",
		"V6_SERVICE_PORT":                "80",
		"V6_PORT":                        "tcp://[fd00::1]:80",
		"V6_PORT_80_TCP":                 "tcp://[fd00::1]:80",
		"V6_PORT_80_TCP_PROTO":           "tcp",
		"V6_PORT_80_TCP_PORT":            "80",
		"V6_PORT_80_TCP_ADDR":            "fd00::1",
	}
	for k, v := range kube {
		want[k] = v
	}
	if !reflect.DeepEqual(got, want) {
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s = %q, want %q", k, got[k], v)
			}
		}
		for k := range got {
			if _, ok := want[k]; !ok {
				t.Errorf("unexpected %s=%q", k, got[k])
			}
		}
	}
	// A namespace's own "kubernetes" service replaces the API server's.
	own := append(services, svc("app", "kubernetes", "10.0.0.99", v1.ServicePort{Port: 1}))
	if got := serviceEnv(own, "app", true)["KUBERNETES_SERVICE_HOST"]; got != "10.0.0.99" {
		t.Errorf("own kubernetes service: KUBERNETES_SERVICE_HOST = %q", got)
	}
	if got := serviceEnv(own, "app", false)["KUBERNETES_SERVICE_HOST"]; got != "10.0.0.1" {
		t.Errorf("links off: KUBERNETES_SERVICE_HOST = %q", got)
	}
}
