package main

import (
	"encoding/json"
	"strings"

	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletconfig "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"

	"github.com/vk-cri/vk-cri/eviction"
)

// flagValues is every setting by flag name, as given or defaulted: the "vkcri" section of
// /configz, readable back as a --config file.
func flagValues(fs *pflag.FlagSet) map[string]string {
	values := map[string]string{}
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Name != "help" && f.Name != "version" {
			values[f.Name] = f.Value.String()
		}
	})
	return values
}

// kubeletConfiguration expresses the settings vk-cri shares with the kubelet as a
// KubeletConfiguration, the "kubeletconfig" section of /configz that kubelet tooling reads.
func kubeletConfiguration(o *options) kubeletconfig.KubeletConfiguration {
	enabled := func(b bool) *bool { return &b }
	maxPods := int32(o.MaxPods)
	healthzPort := o.HealthzPort
	resolvConf := o.ResolvConf
	logMaxFiles := int32(o.ContainerLogMaxFiles)
	var maxParallelPulls *int32
	if o.MaxParallelImagePulls > 0 {
		n := int32(o.MaxParallelImagePulls)
		maxParallelPulls = &n
	}
	return kubeletconfig.KubeletConfiguration{
		TypeMeta:           metav1.TypeMeta{Kind: "KubeletConfiguration", APIVersion: kubeletconfig.SchemeGroupVersion.String()},
		EnableServer:       enabled(o.servesKubeletAPI()),
		Address:            o.Address,
		Port:               o.Port,
		TLSCertFile:        o.TLSCertFile,
		TLSPrivateKeyFile:  o.TLSKeyFile,
		ServerTLSBootstrap: o.RotateServerCertificates,
		HealthzPort:        &healthzPort,
		HealthzBindAddress: o.HealthzBindAddress,
		Authentication: kubeletconfig.KubeletAuthentication{
			X509:      kubeletconfig.KubeletX509Authentication{ClientCAFile: o.ClientCAFile},
			Webhook:   kubeletconfig.KubeletWebhookAuthentication{Enabled: enabled(o.AuthenticationTokenWebhook), CacheTTL: metav1.Duration{Duration: o.AuthenticationTokenCacheTTL}},
			Anonymous: kubeletconfig.KubeletAnonymousAuthentication{Enabled: enabled(o.AnonymousAuth)},
		},
		Authorization: kubeletconfig.KubeletAuthorization{
			Mode: kubeletconfig.KubeletAuthorizationMode(o.AuthorizationMode),
			Webhook: kubeletconfig.KubeletWebhookAuthorization{
				CacheAuthorizedTTL:   metav1.Duration{Duration: o.AuthorizedCacheTTL},
				CacheUnauthorizedTTL: metav1.Duration{Duration: o.UnauthorizedCacheTTL},
			},
		},
		ContainerRuntimeEndpoint:       o.CRIEndpoint,
		RuntimeRequestTimeout:          metav1.Duration{Duration: o.RuntimeRequestTimeout},
		MaxPods:                        maxPods,
		KubeReserved:                   o.KubeReserved,
		SystemReserved:                 o.SystemReserved,
		EvictionHard:                   evictionHardSettings(o.EvictionHard),
		EvictionSoft:                   evictionSoftSettings(o),
		EvictionSoftGracePeriod:        o.EvictionSoftGracePeriod,
		EvictionMinimumReclaim:         o.EvictionMinimumReclaim,
		EvictionMaxPodGracePeriod:      int32(o.EvictionMaxPodGracePeriod),
		ImageGCHighThresholdPercent:    ptr.To(int32(o.ImageGCHighThreshold)),
		ImageGCLowThresholdPercent:     ptr.To(int32(o.ImageGCLowThreshold)),
		ImageMinimumGCAge:              metav1.Duration{Duration: o.ImageMinimumGCAge},
		ImageMaximumGCAge:              metav1.Duration{Duration: o.ImageMaximumGCAge},
		PodLogsDir:                     o.PodLogDir,
		CgroupRoot:                     o.CgroupRoot,
		CgroupDriver:                   o.CgroupDriver,
		CgroupsPerQOS:                  enabled(o.CgroupsPerQOS),
		PodPidsLimit:                   &o.PodMaxPIDs,
		ResolverConfig:                 &resolvConf,
		ClusterDNS:                     o.ClusterDNS,
		ClusterDomain:                  o.ClusterDomain,
		AllowedUnsafeSysctls:           o.AllowedUnsafeSysctls,
		SerializeImagePulls:            enabled(o.SerializeImagePulls),
		MaxParallelImagePulls:          maxParallelPulls,
		StreamingConnectionIdleTimeout: metav1.Duration{Duration: o.StreamingConnectionIdleTimeout},
		ContainerLogMaxSize:            o.ContainerLogMaxSize,
		ContainerLogMaxFiles:           &logMaxFiles,
		ContainerLogMonitorInterval:    &metav1.Duration{Duration: o.ContainerLogMonitorInterval},
	}
}

// configzSections is /configz: the KubeletConfiguration fields vk-cri has (the typed struct's
// other fields, zero here, are left out rather than shown as if set) and every flag's value.
func configzSections(o *options) (map[string]any, error) {
	raw, err := json.Marshal(kubeletConfiguration(o))
	if err != nil {
		return nil, err
	}
	var kc map[string]any
	if err := json.Unmarshal(raw, &kc); err != nil {
		return nil, err
	}
	pruneZero(kc)
	return map[string]any{"kubeletconfig": kc, "vkcri": o.effective}, nil
}

// pruneZero removes zero durations and numbers ("0s", "0", 0) and the objects left empty.
func pruneZero(m map[string]any) {
	for k, v := range m {
		switch v := v.(type) {
		case map[string]any:
			pruneZero(v)
			if len(v) == 0 {
				delete(m, k)
			}
		case string:
			if v == "0s" || v == "0" {
				delete(m, k)
			}
		case float64:
			if v == 0 {
				delete(m, k)
			}
		}
	}
}

// evictionHardSettings is --eviction-hard as the kubelet's evictionHard map (signal: value),
// the kubelet's defaults when not given; nil when it does not parse (validate refuses it).
func evictionHardSettings(spec string) map[string]string {
	thresholds, err := eviction.ParseThresholds(spec)
	if err != nil {
		return nil
	}
	out := map[string]string{}
	for _, t := range thresholds {
		signal, value, _ := strings.Cut(t.String(), "<")
		out[signal] = value
	}
	return out
}

// evictionSoftSettings is --eviction-soft as the kubelet's evictionSoft map; nil when none is
// given or it does not parse (validate refuses it).
func evictionSoftSettings(o *options) map[string]string {
	thresholds, err := o.evictionThresholds()
	if err != nil {
		return nil
	}
	var out map[string]string
	for _, t := range thresholds {
		if t.Hard() {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		signal, value, _ := strings.Cut(t.String(), "<")
		out[signal] = value
	}
	return out
}
