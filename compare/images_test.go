package compare

import (
	"strings"
	"testing"
)

const retargetScenario = `name: retarget
category: lifecycle
description: images in a pod and in an ephemeral container patch.
pods:
  - apiVersion: v1
    kind: Pod
    metadata: {name: main}
    spec:
      initContainers:
        - {name: i, image: 127.0.0.1:5000/vk-cri/busybox:latest, command: ["true"]}
      containers:
        - {name: c, image: 127.0.0.1:5000/vk-cri/vktest:latest}
        - {name: d, image: docker.io/library/other:1}
steps:
  - wait: {pod: main, for: Running}
  - update:
      pod: main
      subresource: ephemeralcontainers
      patch: {spec: {ephemeralContainers: [{name: dbg, image: "127.0.0.1:5000/vk-cri/busybox:latest", command: [sleep, "1"]}]}}
`

func TestRetargetImagesRenamesTheCorpusRegistryOnly(t *testing.T) {
	sc, err := Parse("lifecycle/retarget.yaml", []byte(retargetScenario))
	if err != nil {
		t.Fatal(err)
	}
	digest := sc.Digest
	if got := strings.Join(CorpusImages([]*Scenario{sc}), ","); got != "127.0.0.1:5000/vk-cri/busybox:latest,127.0.0.1:5000/vk-cri/vktest:latest" {
		t.Errorf("corpus images %s", got)
	}
	RetargetImages([]*Scenario{sc}, "registry.example:5443/mirror/")
	p := sc.Pods[0].Spec
	if p.InitContainers[0].Image != "registry.example:5443/mirror/vk-cri/busybox:latest" ||
		p.Containers[0].Image != "registry.example:5443/mirror/vk-cri/vktest:latest" ||
		p.Containers[1].Image != "docker.io/library/other:1" {
		t.Errorf("images %s %s %s", p.InitContainers[0].Image, p.Containers[0].Image, p.Containers[1].Image)
	}
	if patch := string(sc.Steps[1].Update.Patch); !strings.Contains(patch, `"registry.example:5443/mirror/vk-cri/busybox:latest"`) || strings.Contains(patch, "127.0.0.1") {
		t.Errorf("patch %s", patch)
	}
	if sc.Digest != digest {
		t.Errorf("retargeting changed the scenario's digest: a baseline would no longer apply")
	}
	if v := NormalizeText(`Failed to pull image "registry.example:5443/mirror/vk-cri/x:1"`, Volatile{Registry: "registry.example:5443/mirror"}); v != `Failed to pull image "<ip>:<port>/vk-cri/x:1"` {
		t.Errorf("normalised %q: the retargeted registry must read as the corpus's", v)
	}
}
