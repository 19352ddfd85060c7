//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// nodeResolvConf is what the node's /etc/resolv.conf gives: nameservers and search domains.
func nodeResolvConf(t *testing.T) (servers, searches []string) {
	t.Helper()
	b, err := os.ReadFile("/etc/resolv.conf")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 || strings.HasPrefix(f[0], "#") {
			continue
		}
		switch f[0] {
		case "nameserver":
			servers = append(servers, f[1])
		case "search":
			searches = f[1:]
		}
	}
	return servers, searches
}

// resolvOf parses a container's /etc/resolv.conf output.
func resolvOf(out string) (servers, searches, options []string) {
	for _, l := range linesOf(out) {
		f := strings.Fields(l)
		switch {
		case len(f) >= 2 && f[0] == "nameserver":
			servers = append(servers, f[1])
		case len(f) >= 1 && f[0] == "search":
			searches = f[1:]
		case len(f) >= 1 && f[0] == "options":
			options = append(options, f[1:]...)
		}
	}
	return
}

func eventWithReason(t *testing.T, ns, pod, reason string) string {
	t.Helper()
	var msg string
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		evs, err := s.kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + pod})
		if err != nil {
			return false, nil
		}
		for _, e := range evs.Items {
			if e.Reason == reason {
				msg = e.Message
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Errorf("no %s event for pod %s", reason, pod)
	}
	return msg
}

// dnsPolicy Default and ClusterFirst (without cluster DNS on this node) give the node's
// resolv.conf, ClusterFirst with a MissingClusterDNS event; None gives only dnsConfig; dnsConfig
// options merge by name.
func TestDNSPoliciesGiveTheKubeletsResolvConf(t *testing.T) {
	ns := newNamespace(t)
	nodeServers, nodeSearches := nodeResolvConf(t)
	mk := func(name string, policy v1.DNSPolicy, cfg *v1.PodDNSConfig) {
		pod := basePod(name, busybox("main", "cat /etc/resolv.conf"))
		pod.Spec.RestartPolicy = v1.RestartPolicyNever
		pod.Spec.DNSPolicy = policy
		pod.Spec.DNSConfig = cfg
		createPod(t, ns, pod)
	}
	mk("default", v1.DNSDefault, nil)
	mk("clusterfirst", v1.DNSClusterFirst, nil)
	mk("none", v1.DNSNone, &v1.PodDNSConfig{
		Nameservers: []string{"192.0.2.53", "192.0.2.54"},
		Searches:    []string{"one.example", "two.example"},
		Options:     []v1.PodDNSConfigOption{{Name: "ndots", Value: ptr("2")}, {Name: "edns0"}},
	})
	mk("merged", v1.DNSDefault, &v1.PodDNSConfig{
		Nameservers: []string{"192.0.2.99"},
		Searches:    []string{"extra.example"},
		Options:     []v1.PodDNSConfigOption{{Name: "timeout", Value: ptr("3")}},
	})
	for _, name := range []string{"default", "clusterfirst", "none", "merged"} {
		waitPod(t, ns, name, 2*time.Minute, "Succeeded", isSucceeded)
	}
	check := func(name string, wantServers, wantSearches, wantOptions []string) {
		t.Helper()
		servers, searches, options := resolvOf(podLogs(t, ns, name, "main"))
		if fmt.Sprint(servers) != fmt.Sprint(wantServers) || fmt.Sprint(searches) != fmt.Sprint(wantSearches) {
			t.Errorf("%s: nameservers %v search %v, want %v %v", name, servers, searches, wantServers, wantSearches)
		}
		for _, o := range wantOptions {
			found := false
			for _, g := range options {
				found = found || g == o
			}
			if !found {
				t.Errorf("%s: options %v lack %q", name, options, o)
			}
		}
	}
	check("default", nodeServers, nodeSearches, nil)
	check("clusterfirst", nodeServers, nodeSearches, nil)
	check("none", []string{"192.0.2.53", "192.0.2.54"}, []string{"one.example", "two.example"}, []string{"ndots:2", "edns0"})
	check("merged", append(append([]string(nil), nodeServers...), "192.0.2.99")[:min(len(nodeServers)+1, 3)],
		append(append([]string(nil), nodeSearches...), "extra.example"), []string{"timeout:3"})
	msg := eventWithReason(t, ns, "clusterfirst", "MissingClusterDNS")
	if !strings.Contains(msg, `cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.`) {
		t.Errorf("MissingClusterDNS message %q", msg)
	}
}

// /etc/hosts is the kubelet's managed file: header, localhost entries, the pod's IP under its
// FQDN and host name, hostAliases; the UTS host name is spec.hostname, or the FQDN with
// setHostnameAsFQDN.
func TestHostsFileManagedAsTheKubeletDoes(t *testing.T) {
	ns := newNamespace(t)
	pod := basePod("hosts", busybox("main", "cat /etc/hosts; echo hostname=$(hostname)"))
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	pod.Spec.Hostname = "web-1"
	pod.Spec.Subdomain = "web"
	pod.Spec.HostAliases = []v1.HostAlias{{IP: "192.0.2.10", Hostnames: []string{"db.example", "db"}}, {IP: "192.0.2.11", Hostnames: []string{"cache"}}}
	createPod(t, ns, pod)
	p := waitPod(t, ns, "hosts", 2*time.Minute, "Succeeded", isSucceeded)
	// Without --cluster-domain, the domain ends in "svc." as with the kubelet.
	domain := fmt.Sprintf("web.%s.svc.", ns)
	want := "# Kubernetes-managed hosts file.\n" +
		"127.0.0.1\tlocalhost\n" +
		"::1\tlocalhost ip6-localhost ip6-loopback\n" +
		"fe00::0\tip6-localnet\n" +
		"fe00::0\tip6-mcastprefix\n" +
		"fe00::1\tip6-allnodes\n" +
		"fe00::2\tip6-allrouters\n" +
		p.Status.PodIP + "\tweb-1." + domain + "\tweb-1\n" +
		"\n# Entries added by HostAliases.\n" +
		"192.0.2.10\tdb.example\tdb\n" +
		"192.0.2.11\tcache\n" +
		"hostname=web-1\n"
	if got := podLogs(t, ns, "hosts", "main"); got != want {
		t.Errorf("/etc/hosts and hostname:\n%s\nwant:\n%s", got, want)
	}

	fqdn := basePod("fqdn", busybox("main", "hostname"))
	fqdn.Spec.RestartPolicy = v1.RestartPolicyNever
	fqdn.Spec.Hostname = "api"
	fqdn.Spec.Subdomain = "svc1"
	fqdn.Spec.SetHostnameAsFQDN = ptr(true)
	createPod(t, ns, fqdn)
	waitPod(t, ns, "fqdn", 2*time.Minute, "Succeeded", isSucceeded)
	if got, want := strings.TrimSpace(podLogs(t, ns, "fqdn", "main")), fmt.Sprintf("api.svc1.%s.svc.", ns); got != want {
		t.Errorf("hostname with setHostnameAsFQDN = %q, want %q", got, want)
	}
}
