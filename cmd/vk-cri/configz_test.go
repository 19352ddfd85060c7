package main

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
)

func TestConfigzSections(t *testing.T) {
	o := defaultOptions()
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	o.addFlags(fs)
	if err := fs.Parse([]string{"--nodename=n1", "--rotate-server-certificates", "--client-ca-file=/ca.crt", "--healthz-port=0"}); err != nil {
		t.Fatal(err)
	}
	o.effective = flagValues(fs)
	sections, err := configzSections(o)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(sections["kubeletconfig"])
	var got map[string]any
	_ = json.Unmarshal(b, &got)
	want := map[string]any{
		"kind": "KubeletConfiguration", "apiVersion": "kubelet.config.k8s.io/v1beta1",
		"enableServer": true, "address": "0.0.0.0", "port": float64(10250), "serverTLSBootstrap": true,
		"authentication": map[string]any{
			"x509":      map[string]any{"clientCAFile": "/ca.crt"},
			"webhook":   map[string]any{"enabled": true, "cacheTTL": "2m0s"},
			"anonymous": map[string]any{"enabled": false},
		},
		"authorization":                  map[string]any{"mode": "Webhook", "webhook": map[string]any{"cacheAuthorizedTTL": "5m0s", "cacheUnauthorizedTTL": "30s"}},
		"healthzBindAddress":             "127.0.0.1",
		"containerRuntimeEndpoint":       "unix:///run/containerd/containerd.sock",
		"runtimeRequestTimeout":          "2m0s",
		"maxPods":                        float64(110),
		"podLogsDir":                     "/var/log/pods",
		"cgroupRoot":                     "/vk-cri",
		"cgroupsPerQOS":                  true,
		"podPidsLimit":                   float64(-1),
		"serializeImagePulls":            true,
		"streamingConnectionIdleTimeout": "4h0m0s",
		"containerLogMaxSize":            "10Mi",
		"containerLogMaxFiles":           float64(5),
		"cgroupDriver":                   "cgroupfs",
		"resolvConf":                     "/etc/resolv.conf",
		"containerLogMonitorInterval":    "10s",
		"evictionHard":                   map[string]any{"memory.available": "100Mi", "nodefs.available": "10%", "nodefs.inodesFree": "5%", "imagefs.available": "15%"},
		// The kubelet's image GC defaults (imageMaximumGCAge 0 is left out as unset).
		"imageGCHighThresholdPercent": float64(85),
		"imageGCLowThresholdPercent":  float64(80),
		"imageMinimumGCAge":           "2m0s",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("kubeletconfig (-want +got):\n%s", d)
	}
	vk := sections["vkcri"].(map[string]string)
	if vk["nodename"] != "n1" || vk["healthz-port"] != "0" || vk["rotate-server-certificates"] != "true" {
		t.Errorf("vkcri section: %v", vk)
	}
}
