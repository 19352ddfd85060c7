package translate

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// DNS limits of the API's validation that the kubelet applies to the composed configuration.
const (
	maxDNSNameservers     = 3
	maxDNSSearchPaths     = 32
	maxDNSSearchListChars = 2048
	maxDNSSearchLength    = 253
)

// DNSSource composes pods' resolver configuration from the node's resolv.conf and the cluster
// DNS settings (--cluster-dns, --cluster-domain), as the kubelet does.
type DNSSource struct {
	Path          string
	ClusterDNS    []string
	ClusterDomain string
	NodeIPs       []string
}

// usesClusterDNS reports whether the pod's DNS policy asks for the cluster DNS service
// (ClusterFirst without host network, or ClusterFirstWithHostNet).
func usesClusterDNS(pod *v1.Pod) bool {
	switch pod.Spec.DNSPolicy {
	case v1.DNSClusterFirstWithHostNet:
		return true
	case v1.DNSClusterFirst, "":
		return !pod.Spec.HostNetwork
	}
	return false
}

// MissingClusterDNS reports whether the pod asks for cluster DNS that this node does not have;
// it then gets the node's resolver configuration, with a MissingClusterDNS event.
func (d DNSSource) MissingClusterDNS(pod *v1.Pod) bool {
	return usesClusterDNS(pod) && len(d.ClusterDNS) == 0
}

// parseResolvConf reads nameservers, search domains and options.
func parseResolvConf(r io.Reader) (*runtimeapi.DNSConfig, error) {
	cfg := &runtimeapi.DNSConfig{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexAny(line, "#;"); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "nameserver":
			cfg.Servers = append(cfg.Servers, f[1])
		case "search":
			cfg.Searches = nil
			for _, d := range f[1:] {
				// "example.com." and "example.com" are the same domain; "." alone is none.
				if d = strings.TrimSuffix(d, "."); d != "" {
					cfg.Searches = append(cfg.Searches, d)
				}
			}
		case "options":
			cfg.Options = mergeOptions(cfg.Options, f[1:]...)
		}
	}
	return cfg, sc.Err()
}

// ForPod returns the DNS config of a pod's sandbox; see forPodReport.
func (d DNSSource) ForPod(pod *v1.Pod) (*runtimeapi.DNSConfig, error) {
	cfg, _, err := d.ForPodReport(pod)
	return cfg, err
}

// ForPodReport composes the DNS config of a pod's sandbox. None uses only the pod's dnsConfig;
// ClusterFirst with cluster DNS gets the cluster nameservers, the cluster search domains before
// the node's, and ndots:5; the other policies (and ClusterFirst without cluster DNS) get the
// node's resolv.conf. dnsConfig is merged on top, then the kubelet's limits apply: each cut is
// reported as a DNSConfigForming warning.
func (d DNSSource) ForPodReport(pod *v1.Pod) (*runtimeapi.DNSConfig, []string, error) {
	cfg := &runtimeapi.DNSConfig{}
	if pod.Spec.DNSPolicy != v1.DNSNone && d.Path != "" {
		f, err := os.Open(d.Path)
		if err != nil {
			return nil, nil, fmt.Errorf("reading resolver configuration: %w", err)
		}
		defer f.Close()
		if cfg, err = parseResolvConf(f); err != nil {
			return nil, nil, fmt.Errorf("parsing %s: %w", d.Path, err)
		}
	}
	switch {
	case pod.Spec.DNSPolicy == v1.DNSNone:
	case usesClusterDNS(pod) && len(d.ClusterDNS) > 0:
		cfg.Servers = append([]string(nil), d.ClusterDNS...)
		if d.ClusterDomain != "" {
			cluster := []string{pod.Namespace + ".svc." + d.ClusterDomain, "svc." + d.ClusterDomain, d.ClusterDomain}
			cfg.Searches = appendMissing(nil, append(cluster, cfg.Searches...)...)
		}
		cfg.Options = []string{"ndots:5"}
	case d.Path == "":
		// No resolv.conf: the node itself is the resolver.
		cfg.Servers = nil
		for _, ip := range d.NodeIPs {
			if strings.Contains(ip, ":") {
				cfg.Servers = append(cfg.Servers, "::1")
			} else {
				cfg.Servers = append(cfg.Servers, "127.0.0.1")
			}
		}
		if len(cfg.Servers) == 0 {
			cfg.Servers = []string{"127.0.0.1"}
		}
		cfg.Searches = []string{"."}
	}
	if dc := pod.Spec.DNSConfig; dc != nil {
		cfg.Servers = appendMissing(cfg.Servers, dc.Nameservers...)
		cfg.Searches = appendMissing(cfg.Searches, dc.Searches...)
		for _, o := range dc.Options {
			opt := o.Name
			if o.Value != nil {
				opt += ":" + *o.Value
			}
			cfg.Options = mergeOptions(cfg.Options, opt)
		}
	}
	var warnings []string
	if len(cfg.Servers) > maxDNSNameservers {
		cfg.Servers = cfg.Servers[:maxDNSNameservers]
		warnings = append(warnings, "Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: "+strings.Join(cfg.Servers, " "))
	}
	var cut bool
	if cfg.Searches, cut = limitSearches(cfg.Searches); cut {
		warnings = append(warnings, "Search Line limits were exceeded, some search paths have been omitted, the applied search line is: "+strings.Join(cfg.Searches, " "))
	}
	return cfg, warnings, nil
}

// limitSearches keeps at most 32 search domains, drops those longer than a DNS name, and cuts
// domains from the end until the search line fits in 2048 characters.
func limitSearches(in []string) ([]string, bool) {
	cut := false
	if len(in) > maxDNSSearchPaths {
		in, cut = in[:maxDNSSearchPaths], true
	}
	out := make([]string, 0, len(in))
	for _, s := range in {
		if len(s) > maxDNSSearchLength {
			cut = true
			continue
		}
		out = append(out, s)
	}
	for len(out) > 0 && len(strings.Join(out, " ")) > maxDNSSearchListChars {
		out, cut = out[:len(out)-1], true
	}
	if len(out) == 0 && len(in) == 0 {
		return in, cut
	}
	return out, cut
}

// mergeOptions adds resolver options; an option already present by name ("ndots" of
// "ndots:5") takes the new value in its old place.
func mergeOptions(list []string, opts ...string) []string {
	for _, o := range opts {
		name, _, _ := strings.Cut(o, ":")
		replaced := false
		for i, l := range list {
			if n, _, _ := strings.Cut(l, ":"); n == name {
				list[i] = o
				replaced = true
				break
			}
		}
		if !replaced {
			list = append(list, o)
		}
	}
	return list
}

func appendMissing(list []string, items ...string) []string {
	for _, it := range items {
		found := false
		for _, l := range list {
			if l == it {
				found = true
				break
			}
		}
		if !found {
			list = append(list, it)
		}
	}
	return list
}
