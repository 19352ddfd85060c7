package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	"github.com/vk-cri/vk-cri/cri"
	"github.com/vk-cri/vk-cri/logrotate"
	"github.com/vk-cri/vk-cri/provider"
	"github.com/vk-cri/vk-cri/streaming"
)

// options are vk-cri's settings, from flags and an optional YAML config file whose keys are the
// flag names (flags given on the command line win).
type options struct {
	ConfigFile string
	Kubeconfig string
	// TLS bootstrap of the node's client certificate (the kubelet's flags).
	BootstrapKubeconfig   string
	RotateCertificates    bool
	NodeName              string
	CRIEndpoint           string
	RuntimeRequestTimeout time.Duration
	NodeIP                string
	Address               string
	Port                  int32
	TLSCertFile           string
	TLSKeyFile            string
	ClientCAFile          string
	// Kubelet API serving certificate: files (TLSCertFile), the certificates API
	// (RotateServerCertificates) or, only when asked for, self-signed.
	RotateServerCertificates bool
	CertDir                  string
	SelfSignedServingCert    bool
	// Kubelet API authentication and authorisation (the kubelet's flags and defaults, except
	// that anonymous requests are refused unless allowed).
	AnonymousAuth               bool
	AuthenticationTokenWebhook  bool
	AuthenticationTokenCacheTTL time.Duration
	AuthorizationMode           string
	AuthorizedCacheTTL          time.Duration
	UnauthorizedCacheTTL        time.Duration
	HealthzBindAddress          string
	HealthzPort                 int32
	EnableSystemLogHandler      bool
	SystemLogDir                string
	RootDir                     string
	ForbidHostPath              bool
	PodLogDir                   string
	CgroupRoot                  string
	CgroupDriver                string
	CgroupsPerQOS               bool
	PodMaxPIDs                  int64
	ResolvConf                  string
	ClusterDNS                  []string
	ClusterDomain               string
	AllowedUnsafeSysctls        []string
	SerializeImagePulls         bool
	MaxParallelImagePulls       int
	MaxPods                     int
	KubeReserved                map[string]string
	SystemReserved              map[string]string
	NodeLabels                  map[string]string
	RegisterWithTaints          []string
	NodeOwnerClusterRole        string
	Workers                     int
	LogLevel                    string
	LogFormat                   string
	// Measurements (cAdvisor), pressure conditions and eviction.
	EnableStats            bool
	HousekeepingInterval   time.Duration
	EvictionHard           string
	EvictionPressurePeriod time.Duration
	// Soft eviction (eviction_options.go).
	evictionOptions
	// Garbage collection (gc_options.go).
	gcOptions
	// Declared capacity (capacity.go).
	capacityOptions
	// Container logs and streaming, with the kubelet's names and defaults.
	ContainerLogMaxSize            string
	ContainerLogMaxFiles           int
	ContainerLogMonitorInterval    time.Duration
	StreamingConnectionIdleTimeout time.Duration

	// effective is every flag's value once flags and config file are applied (/configz).
	effective map[string]string
}

func defaultOptions() *options {
	host, _ := os.Hostname()
	return &options{
		NodeName:                    host,
		CRIEndpoint:                 "unix:///run/containerd/containerd.sock",
		RuntimeRequestTimeout:       2 * time.Minute,
		Address:                     "0.0.0.0",
		Port:                        10250,
		AuthenticationTokenWebhook:  true,
		AuthenticationTokenCacheTTL: 2 * time.Minute,
		AuthorizationMode:           "Webhook",
		AuthorizedCacheTTL:          5 * time.Minute,
		UnauthorizedCacheTTL:        30 * time.Second,
		HealthzBindAddress:          "127.0.0.1",
		HealthzPort:                 10248,
		EnableSystemLogHandler:      true,
		SystemLogDir:                "/var/log",
		RootDir:                     "/var/lib/vk-cri",
		PodLogDir:                   "/var/log/pods",
		CgroupRoot:                  "/vk-cri",
		CgroupDriver:                cri.CgroupDriverCgroupfs,
		CgroupsPerQOS:               true,
		PodMaxPIDs:                  -1,
		ResolvConf:                  "/etc/resolv.conf",
		SerializeImagePulls:         true,
		MaxPods:                     110,
		Workers:                     10,
		LogLevel:                    "info",
		LogFormat:                   "text",
		EnableStats:                 true,
		HousekeepingInterval:        10 * time.Second,
		EvictionPressurePeriod:      5 * time.Minute,
		gcOptions:                   defaultGCOptions(),

		ContainerLogMaxSize:            "10Mi",
		ContainerLogMaxFiles:           logrotate.DefaultPolicy.MaxFiles,
		ContainerLogMonitorInterval:    logrotate.DefaultInterval,
		StreamingConnectionIdleTimeout: streaming.DefaultIdleTimeout,
	}
}

func (o *options) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ConfigFile, "config", o.ConfigFile, "YAML file of settings; its keys are these flags' names (e.g. 'nodename: vk1'). Flags given on the command line take precedence.")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "kubeconfig with vk-cri's credentials (default: $KUBECONFIG, then in-cluster config)")
	fs.StringVar(&o.BootstrapKubeconfig, "bootstrap-kubeconfig", o.BootstrapKubeconfig, "kubeconfig whose credentials (a bootstrap token) request the node's client certificate (CN system:node:<nodename>, O system:nodes, signer kubernetes.io/kube-apiserver-client-kubelet) when --kubeconfig holds no valid one; --kubeconfig is then written to use the certificate kept in --cert-dir")
	fs.BoolVar(&o.RotateCertificates, "rotate-certificates", o.RotateCertificates, "renew the node's client certificate before it expires through the certificates API (needs --bootstrap-kubeconfig)")
	fs.StringVar(&o.NodeName, "nodename", o.NodeName, "name of the Node object to register")
	fs.StringVar(&o.CRIEndpoint, "cri-endpoint", o.CRIEndpoint, "CRI runtime endpoint (unix socket of containerd or CRI-O)")
	fs.DurationVar(&o.RuntimeRequestTimeout, "runtime-request-timeout", o.RuntimeRequestTimeout, "deadline of each CRI call except image pulls and container stops")
	fs.StringVar(&o.NodeIP, "node-ip", o.NodeIP, "node InternalIP address (default: first non-loopback address of the host)")
	fs.StringVar(&o.Address, "address", o.Address, "address the kubelet API listens on")
	fs.Int32Var(&o.Port, "port", o.Port, "port of the kubelet API (HTTPS), reported as the node's kubelet endpoint")
	fs.StringVar(&o.TLSCertFile, "tls-cert-file", o.TLSCertFile, "serving certificate of the kubelet API (PEM); give it, --rotate-server-certificates or --self-signed-serving-cert, or the API is not served")
	fs.StringVar(&o.TLSKeyFile, "tls-private-key-file", o.TLSKeyFile, "private key of --tls-cert-file")
	fs.BoolVar(&o.RotateServerCertificates, "rotate-server-certificates", o.RotateServerCertificates, "request the kubelet API's serving certificate through the certificates API (signer kubernetes.io/kubelet-serving) and renew it before it expires; the CSRs must be approved")
	fs.StringVar(&o.CertDir, "cert-dir", o.CertDir, "directory of the certificates requested through the certificates API: the node's client certificate (kubelet-client-current.pem) and the kubelet API's serving certificate (kubelet-server-current.pem) (default: <root-dir>/pki)")
	fs.BoolVar(&o.SelfSignedServingCert, "self-signed-serving-cert", o.SelfSignedServingCert, "serve the kubelet API with a self-signed certificate (the API server cannot verify it)")
	fs.StringVar(&o.ClientCAFile, "client-ca-file", o.ClientCAFile, "CA whose client certificates authenticate callers of the kubelet API (CN = user, O = groups)")
	fs.BoolVar(&o.AnonymousAuth, "anonymous-auth", o.AnonymousAuth, "let requests without credentials through to authorisation as system:anonymous")
	fs.BoolVar(&o.AuthenticationTokenWebhook, "authentication-token-webhook", o.AuthenticationTokenWebhook, "authenticate bearer tokens with TokenReviews")
	fs.DurationVar(&o.AuthenticationTokenCacheTTL, "authentication-token-webhook-cache-ttl", o.AuthenticationTokenCacheTTL, "how long TokenReview answers are cached")
	fs.StringVar(&o.AuthorizationMode, "authorization-mode", o.AuthorizationMode, "kubelet API authorisation: Webhook (SubjectAccessReviews) or AlwaysAllow")
	fs.DurationVar(&o.AuthorizedCacheTTL, "authorization-webhook-cache-authorized-ttl", o.AuthorizedCacheTTL, "how long 'allowed' SubjectAccessReview answers are cached")
	fs.DurationVar(&o.UnauthorizedCacheTTL, "authorization-webhook-cache-unauthorized-ttl", o.UnauthorizedCacheTTL, "how long 'denied' SubjectAccessReview answers are cached")
	fs.StringVar(&o.HealthzBindAddress, "healthz-bind-address", o.HealthzBindAddress, "address of the plain-HTTP, unauthenticated healthz endpoint")
	fs.Int32Var(&o.HealthzPort, "healthz-port", o.HealthzPort, "port of the healthz endpoint; 0 disables it")
	fs.BoolVar(&o.EnableSystemLogHandler, "enable-system-log-handler", o.EnableSystemLogHandler,
		"serve the files of --system-log-dir at /logs/ on the kubelet API (authorised as nodes/log), as the kubelet serves /var/log")
	fs.StringVar(&o.SystemLogDir, "system-log-dir", o.SystemLogDir, "directory served at /logs/ when --enable-system-log-handler is on")
	fs.StringVar(&o.RootDir, "root-dir", o.RootDir, "directory for vk-cri's pod data; its file system is the node's ephemeral-storage")
	fs.BoolVar(&o.ForbidHostPath, "forbid-host-path", o.ForbidHostPath, "refuse hostPath volumes and claims bound to hostPath or local persistent volumes: such pods wait with FailedMount events")
	fs.StringVar(&o.PodLogDir, "pod-log-dir", o.PodLogDir, "directory of container logs, in the kubelet's <namespace>_<pod>_<uid>/<container>/<n>.log layout")
	fs.StringVar(&o.CgroupRoot, "cgroup-root", o.CgroupRoot, "cgroup under which pods' cgroups (<root>/kubepods/[burstable|besteffort/]pod<uid>) are created; vk-cri's own by default, apart from a kubelet's /kubepods")
	fs.StringVar(&o.CgroupDriver, "cgroup-driver", o.CgroupDriver, "cgroup driver of the runtime (cgroupfs or systemd) for runtimes without the CRI RuntimeConfig call (containerd 1.6); a runtime that reports its driver overrides it, as with the kubelet")
	fs.BoolVar(&o.CgroupsPerQOS, "cgroups-per-qos", o.CgroupsPerQOS, "create kubepods, its QoS cgroups and each pod's cgroup with the kubelet's limits (the pod's memory limit, CFS quota, cpu shares, pids limit) before the pod's sandbox; off: the runtime creates them without limits")
	fs.Int64Var(&o.PodMaxPIDs, "pod-max-pids", o.PodMaxPIDs, "maximum number of processes in a pod (its cgroup's pids.max); -1: no limit")
	fs.StringVar(&o.ResolvConf, "resolv-conf", o.ResolvConf, "resolver configuration given to pods")
	fs.StringSliceVar(&o.ClusterDNS, "cluster-dns", o.ClusterDNS, "comma-separated IPs of the cluster DNS service that ClusterFirst pods use; none: they get --resolv-conf (MissingClusterDNS event)")
	fs.StringVar(&o.ClusterDomain, "cluster-domain", o.ClusterDomain, "cluster DNS domain (e.g. cluster.local): search domains of ClusterFirst pods and the FQDN of pods with a subdomain")
	fs.StringSliceVar(&o.AllowedUnsafeSysctls, "allowed-unsafe-sysctls", o.AllowedUnsafeSysctls, "comma-separated unsafe sysctls or prefixes ending in '*' that pods may set; other unsafe sysctls reject the pod (SysctlForbidden)")
	fs.BoolVar(&o.SerializeImagePulls, "serialize-image-pulls", o.SerializeImagePulls, "pull one image at a time; false pulls in parallel (up to --max-parallel-image-pulls)")
	fs.IntVar(&o.MaxParallelImagePulls, "max-parallel-image-pulls", o.MaxParallelImagePulls, "with --serialize-image-pulls=false, the most pulls at once (0: no limit)")
	fs.IntVar(&o.MaxPods, "max-pods", o.MaxPods, "pods capacity of the node")
	fs.StringToStringVar(&o.KubeReserved, "kube-reserved", o.KubeReserved, "resources kept from pods for Kubernetes' own daemons, subtracted from the node's allocatable as the kubelet does (cpu=200m,memory=500Mi,ephemeral-storage=1Gi,pid=1000; pid reserves nothing in allocatable)")
	fs.StringToStringVar(&o.SystemReserved, "system-reserved", o.SystemReserved, "resources kept from pods for the operating system's daemons, subtracted from the node's allocatable like --kube-reserved")
	fs.StringToStringVar(&o.NodeLabels, "node-labels", o.NodeLabels, "labels added to the node (key=value,...); applied at every start")
	fs.StringSliceVar(&o.RegisterWithTaints, "register-with-taints", o.RegisterWithTaints, "taints the node is registered with (key=value:Effect,...); set only when the Node is created, as the kubelet does")
	fs.StringVar(&o.NodeOwnerClusterRole, "node-owner-clusterrole", o.NodeOwnerClusterRole, "ClusterRole made the owner of the Node when vk-cri creates it, so that deleting the role deletes the node (Helm chart's extra nodes)")
	fs.IntVar(&o.Workers, "workers", o.Workers, "virtual-kubelet pod controller workers")
	fs.StringVar(&o.LogLevel, "log-level", o.LogLevel, "log level: trace, debug, info, warn, error")
	fs.StringVar(&o.LogFormat, "log-format", o.LogFormat, "log format: text or json")
	fs.BoolVar(&o.EnableStats, "enable-stats", o.EnableStats, "measure the node with an embedded cAdvisor: /stats/summary, /metrics/resource, /metrics/cadvisor, pressure conditions and eviction")
	fs.DurationVar(&o.HousekeepingInterval, "housekeeping-interval", o.HousekeepingInterval, "how often cAdvisor samples the node's root cgroup")
	fs.StringVar(&o.EvictionHard, "eviction-hard", o.EvictionHard, "hard eviction thresholds in the kubelet's syntax, e.g. 'memory.available<100Mi,nodefs.available<10%' (default: the kubelet's memory.available<100Mi,nodefs.available<10%,nodefs.inodesFree<5%,imagefs.available<15%); those on memory.available and nodefs.available are also subtracted from the node's allocatable")
	fs.DurationVar(&o.EvictionPressurePeriod, "eviction-pressure-transition-period", o.EvictionPressurePeriod, "how long a pressure condition stays True after its signal recovered")
	o.evictionOptions.addFlags(fs)
	o.gcOptions.addFlags(fs)
	o.capacityOptions.addFlags(fs)
	fs.StringVar(&o.ContainerLogMaxSize, "container-log-max-size", o.ContainerLogMaxSize, "size (a quantity: 10Mi, 64Ki) a container's log file reaches before it is rotated; negative: never rotate")
	fs.IntVar(&o.ContainerLogMaxFiles, "container-log-max-files", o.ContainerLogMaxFiles, "most log files a container keeps, the current one included (at least 2); older rotated files are gzipped, the oldest removed")
	fs.DurationVar(&o.ContainerLogMonitorInterval, "container-log-monitor-interval", o.ContainerLogMonitorInterval, "how often container log sizes are checked for rotation (at least 3s)")
	fs.DurationVar(&o.StreamingConnectionIdleTimeout, "streaming-connection-idle-timeout", o.StreamingConnectionIdleTimeout, "exec, attach and port-forward connections that carry nothing for this long are closed (0: never); the runtime's own streaming idle timeout must not be shorter")
}

// applyConfigFile sets every flag named in the config file that was not given on the command line.
func applyConfigFile(fs *pflag.FlagSet, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading config file: %w", err)
	}
	// Raw JSON values keep numbers as written (1000000, not 1e+06).
	var settings map[string]json.RawMessage
	if err := yaml.Unmarshal(data, &settings); err != nil {
		return fmt.Errorf("parsing config file %s: %w", path, err)
	}
	for key, value := range settings {
		f := fs.Lookup(key)
		if f == nil || key == "config" {
			return fmt.Errorf("config file %s: unknown setting %q", path, key)
		}
		if f.Changed {
			continue
		}
		if err := fs.Set(key, settingValue(value)); err != nil {
			return fmt.Errorf("config file %s: setting %q: %w", path, key, err)
		}
	}
	return nil
}

// settingValue renders a config file value as a flag value: strings unquoted, null as empty,
// lists comma-separated, maps as key=value lists, numbers and booleans as written.
func settingValue(raw json.RawMessage) string {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err == nil {
		parts := make([]string, len(list))
		for i, item := range list {
			parts[i] = settingValue(item)
		}
		return strings.Join(parts, ",")
	}
	var m map[string]string
	if err := json.Unmarshal(raw, &m); err == nil {
		parts := make([]string, 0, len(m))
		for _, k := range slices.Sorted(maps.Keys(m)) {
			parts = append(parts, k+"="+m[k])
		}
		return strings.Join(parts, ",")
	}
	if string(raw) == "null" {
		return ""
	}
	return string(raw)
}

// certDir is --cert-dir or its default.
func (o *options) certDir() string {
	if o.CertDir != "" {
		return o.CertDir
	}
	return filepath.Join(o.RootDir, "pki")
}

func (o *options) validate() error {
	if o.NodeName == "" {
		return fmt.Errorf("--nodename is required")
	}
	if o.BootstrapKubeconfig != "" && o.Kubeconfig == "" {
		return fmt.Errorf("--bootstrap-kubeconfig needs --kubeconfig: the path the node's own kubeconfig is written to")
	}
	if o.RotateCertificates && o.BootstrapKubeconfig == "" {
		return fmt.Errorf("--rotate-certificates needs --bootstrap-kubeconfig")
	}
	if o.CgroupDriver != cri.CgroupDriverCgroupfs && o.CgroupDriver != cri.CgroupDriverSystemd {
		return fmt.Errorf("--cgroup-driver %q: want cgroupfs or systemd", o.CgroupDriver)
	}
	if (o.TLSCertFile == "") != (o.TLSKeyFile == "") {
		return fmt.Errorf("--tls-cert-file and --tls-private-key-file go together")
	}
	sources := 0
	for _, given := range []bool{o.TLSCertFile != "", o.RotateServerCertificates, o.SelfSignedServingCert} {
		if given {
			sources++
		}
	}
	if sources > 1 {
		return fmt.Errorf("--tls-cert-file, --rotate-server-certificates and --self-signed-serving-cert exclude each other")
	}
	if sources == 1 {
		if err := o.authConfig().Validate(); err != nil {
			return fmt.Errorf("kubelet API: %w", err)
		}
	}
	if o.HealthzPort < 0 || o.HealthzPort > 65535 {
		return fmt.Errorf("--healthz-port must be 0 (off) or a port number")
	}
	if o.MaxPods <= 0 {
		return fmt.Errorf("--max-pods must be positive")
	}
	if _, err := o.nodeReservation(); err != nil {
		return err
	}
	if err := validateNodeLabels(o.NodeLabels, o.BootstrapKubeconfig != ""); err != nil {
		return err
	}
	if _, err := parseTaints(o.RegisterWithTaints); err != nil {
		return err
	}
	if o.MaxParallelImagePulls < 0 {
		return fmt.Errorf("--max-parallel-image-pulls must not be negative")
	}
	if o.SerializeImagePulls && o.MaxParallelImagePulls > 1 {
		return fmt.Errorf("--max-parallel-image-pulls above 1 needs --serialize-image-pulls=false")
	}
	if err := provider.ValidateSysctlPatterns(o.AllowedUnsafeSysctls); err != nil {
		return fmt.Errorf("--allowed-unsafe-sysctls: %w", err)
	}
	for _, ip := range o.ClusterDNS {
		if net.ParseIP(ip) == nil {
			return fmt.Errorf("--cluster-dns: %q is not an IP address", ip)
		}
	}
	if o.Workers <= 0 {
		return fmt.Errorf("--workers must be positive")
	}
	if _, err := o.logPolicy(); err != nil {
		return err
	}
	if err := o.gcOptions.validate(); err != nil {
		return err
	}
	if _, err := o.evictionThresholds(); err != nil {
		return err
	}
	if _, err := o.declaredCapacity(); err != nil {
		return err
	}
	if o.ContainerLogMonitorInterval < 3*time.Second {
		return fmt.Errorf("--container-log-monitor-interval must be at least 3s, not %v", o.ContainerLogMonitorInterval)
	}
	if o.StreamingConnectionIdleTimeout < 0 {
		return fmt.Errorf("--streaming-connection-idle-timeout must not be negative")
	}
	switch o.LogFormat {
	case "text", "json":
	default:
		return fmt.Errorf("--log-format must be text or json, not %q", o.LogFormat)
	}
	return nil
}

// logPolicy is the container log rotation policy the flags describe.
func (o *options) logPolicy() (logrotate.Policy, error) {
	q, err := resource.ParseQuantity(o.ContainerLogMaxSize)
	if err != nil {
		return logrotate.Policy{}, fmt.Errorf("--container-log-max-size %q: %w", o.ContainerLogMaxSize, err)
	}
	size, ok := q.AsInt64()
	if !ok {
		return logrotate.Policy{}, fmt.Errorf("--container-log-max-size %q is not a whole number of bytes", o.ContainerLogMaxSize)
	}
	p := logrotate.Policy{MaxSize: size, MaxFiles: o.ContainerLogMaxFiles}
	if err := p.Validate(); err != nil {
		return logrotate.Policy{}, fmt.Errorf("--container-log-max-files: %w", err)
	}
	return p, nil
}
