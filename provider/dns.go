package provider

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// dnsSource gives pods the node's resolver configuration. Cluster DNS (ClusterFirst with a
// cluster DNS service) is not configured here, so ClusterFirst falls back to the node's
// resolv.conf, as the kubelet does when it has no clusterDNS.
type dnsSource struct {
	path string
}

// usesClusterDNS reports whether the pod's DNS policy asks for the cluster DNS service, which
// this node does not have (ClusterFirst without host network, or ClusterFirstWithHostNet).
func usesClusterDNS(pod *v1.Pod) bool {
	switch pod.Spec.DNSPolicy {
	case v1.DNSClusterFirstWithHostNet:
		return true
	case v1.DNSClusterFirst, "":
		return !pod.Spec.HostNetwork
	}
	return false
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

// forPod returns the DNS config of a pod's sandbox. dnsPolicy None uses only the pod's dnsConfig;
// the other policies start from the node's resolv.conf, and dnsConfig is merged on top.
func (d dnsSource) forPod(pod *v1.Pod) (*runtimeapi.DNSConfig, error) {
	cfg := &runtimeapi.DNSConfig{}
	if pod.Spec.DNSPolicy != v1.DNSNone && d.path != "" {
		f, err := os.Open(d.path)
		if err != nil {
			return nil, fmt.Errorf("reading resolver configuration: %w", err)
		}
		defer f.Close()
		if cfg, err = parseResolvConf(f); err != nil {
			return nil, fmt.Errorf("parsing %s: %w", d.path, err)
		}
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
	return cfg, nil
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
