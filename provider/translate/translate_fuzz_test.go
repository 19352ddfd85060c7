package translate

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"sigs.k8s.io/yaml"
)

// FuzzPodTranslation translates fuzzed pods (JSON) into CRI sandbox and container configs.
// Whatever the pod, the translation returns an error or a config, never panics and never
// changes the pod; a config keeps the container's name and mounts; whatever the quantities,
// its CPU shares stay within 2..262144, its quota is 0 or at least 1 ms, and its memory limit
// is negative only if the spec's is (which the API refuses). Seeds:
// testdata/fuzz/FuzzPodTranslation, plus the pods of the golden inputs.
func FuzzPodTranslation(f *testing.F) {
	for _, dir := range []string{"container", "sandbox"} {
		files, _ := filepath.Glob(filepath.Join("testdata", dir, "*.yaml"))
		for _, file := range files {
			var tc struct {
				Pod v1.Pod `json:"pod"`
			}
			raw, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			if err := yaml.Unmarshal(raw, &tc); err != nil {
				f.Fatalf("%s: %v", file, err)
			}
			if b, err := json.Marshal(&tc.Pod); err == nil {
				f.Add(b)
			}
		}
	}
	node := NodeFacts{MemoryCapacity: 8 << 30, SeccompRoot: "/var/lib/vk-cri/seccomp"}
	f.Fuzz(func(t *testing.T, podJSON []byte) {
		var pod v1.Pod
		if err := json.Unmarshal(podJSON, &pod); err != nil {
			return
		}
		before := pod.DeepCopy()
		env := SandboxEnv{NodeName: "vk-node-1", PodLogRoot: "/var/log/pods", CgroupRoot: "/", ClusterDomain: "cluster.local"}
		if dns, err := (DNSSource{Path: filepath.Join("testdata", "resolv.conf"), ClusterDNS: []string{"10.96.0.10"}, ClusterDomain: "cluster.local"}).ForPod(&pod); err == nil {
			env.DNS = dns
		}
		if cfg, err := SandboxConfig(env, &pod, 0); err == nil && cfg.GetMetadata().GetName() != pod.Name {
			t.Fatalf("sandbox of pod %q named %q", pod.Name, cfg.GetMetadata().GetName())
		}
		for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
			for i := range list {
				c := &list[i]
				var mounts []*runtimeapi.Mount
				for _, vm := range c.VolumeMounts {
					mounts = append(mounts, &runtimeapi.Mount{ContainerPath: vm.MountPath, HostPath: "/var/lib/vk-cri/pods/x/volumes/" + vm.Name})
				}
				cfg, err := ContainerConfig(node, ContainerInput{Owner: "vk-node-1", Pod: &pod, Container: c, ImageRef: "sha256:0", Env: literalEnv(c), Mounts: mounts})
				if err != nil {
					continue
				}
				if cfg.GetMetadata().GetName() != c.Name || len(cfg.GetMounts()) != len(mounts) {
					t.Fatalf("container %q: config %q with %d mounts (%d given)", c.Name, cfg.GetMetadata().GetName(), len(cfg.GetMounts()), len(mounts))
				}
				r := cfg.GetLinux().GetResources()
				if r.GetCpuShares() < MinShares || r.GetCpuShares() > MaxShares {
					t.Fatalf("container %q (%v): cpu shares %d", c.Name, c.Resources, r.GetCpuShares())
				}
				if q := r.GetCpuQuota(); q != 0 && q < MinCFSQuota {
					t.Fatalf("container %q (%v): cpu quota %d", c.Name, c.Resources, q)
				}
				if r.GetMemoryLimitInBytes() < 0 && c.Resources.Limits.Memory().Sign() >= 0 {
					t.Fatalf("container %q (%v): memory limit %d", c.Name, c.Resources, r.GetMemoryLimitInBytes())
				}
			}
		}
		if !equalPods(before, &pod) {
			t.Fatalf("the translation changed the pod")
		}
	})
}
