package translate

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
)

func TestManagedHostsContent(t *testing.T) {
	aliases := []v1.HostAlias{{IP: "192.0.2.1", Hostnames: []string{"a.example", "a"}}, {IP: "192.0.2.2", Hostnames: []string{"b"}}}
	base := "# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n" +
		"fe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n"
	cases := []struct {
		name         string
		ips          []string
		host, domain string
		aliases      []v1.HostAlias
		want         string
	}{
		{"short name", []string{"10.88.0.5"}, "web", "", nil, base + "10.88.0.5\tweb\n"},
		{"FQDN first", []string{"10.88.0.5"}, "web-0", "web.shop.svc.cluster.local", nil, base + "10.88.0.5\tweb-0.web.shop.svc.cluster.local\tweb-0\n"},
		{"each IP", []string{"10.88.0.5", "fd00::5"}, "web", "", nil, base + "10.88.0.5\tweb\nfd00::5\tweb\n"},
		{"aliases after a blank line", []string{"10.88.0.5"}, "web", "", aliases,
			base + "10.88.0.5\tweb\n\n# Entries added by HostAliases.\n192.0.2.1\ta.example\ta\n192.0.2.2\tb\n"},
	}
	for _, tc := range cases {
		if diff := cmp.Diff(tc.want, string(ManagedHostsContent(tc.ips, tc.host, tc.domain, tc.aliases))); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
	got := string(HostNetworkHostsContent([]byte("127.0.0.1 localhost\n"), aliases[1:]))
	want := "# Kubernetes-managed hosts file (host network).\n127.0.0.1 localhost\n\n# Entries added by HostAliases.\n192.0.2.2\tb\n"
	if got != want {
		t.Errorf("host network hosts file:\n%q\nwant\n%q", got, want)
	}
}

func TestPodHostAndDomain(t *testing.T) {
	cases := []struct {
		name                 string
		mod                  func(*v1.Pod)
		domain               string
		wantHost, wantDomain string
	}{
		{"pod name", func(*v1.Pod) {}, "cluster.local", "web", ""},
		{"hostname and subdomain", func(p *v1.Pod) { p.Spec.Hostname, p.Spec.Subdomain = "db-0", "db" }, "cluster.local", "db-0", "db.default.svc.cluster.local"},
		{"no cluster domain: the kubelet's trailing dot", func(p *v1.Pod) { p.Spec.Subdomain = "db" }, "", "web", "db.default.svc."},
		{"long name cut", func(p *v1.Pod) { p.Name = strings.Repeat("a", 62) + "-b-c" }, "", strings.Repeat("a", 62), ""},
		{"hostnameOverride: no domain", func(p *v1.Pod) { p.Spec.HostnameOverride, p.Spec.Subdomain = ptrTo("custom.example"), "db" }, "cluster.local", "custom.example", ""},
	}
	for _, tc := range cases {
		pod := testPod()
		tc.mod(pod)
		h, d := PodHostAndDomain(pod, tc.domain)
		if h != tc.wantHost || d != tc.wantDomain {
			t.Errorf("%s: got %q %q, want %q %q", tc.name, h, d, tc.wantHost, tc.wantDomain)
		}
	}
}

func TestPodHostnameFQDN(t *testing.T) {
	pod := testPod()
	pod.Spec.Hostname, pod.Spec.Subdomain, pod.Spec.SetHostnameAsFQDN = "api", "svc1", ptrTo(true)
	if got, err := podHostname(pod, "cluster.local"); err != nil || got != "api.svc1.default.svc.cluster.local" {
		t.Errorf("podHostname = %q, %v", got, err)
	}
	pod.Spec.Hostname = strings.Repeat("h", 40)
	if _, err := podHostname(pod, "cluster.local"); err == nil || !strings.Contains(err.Error(), "is too long (64 characters is the max") {
		t.Errorf("FQDN over 64 characters: error %v", err)
	}
	pod.Spec.Subdomain = ""
	if got, _ := podHostname(pod, "cluster.local"); got != pod.Spec.Hostname {
		t.Errorf("setHostnameAsFQDN without subdomain: %q, want the short name", got)
	}
}
