package translate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"sigs.k8s.io/yaml"

	"github.com/vk-cri/vk-cri/cm"
	"github.com/vk-cri/vk-cri/internal/golden"
)

// go test ./provider/translate -run Golden -update rewrites the golden files from the current output
// (internal/golden).

// sandboxGoldenCase is one testdata/sandbox/*.yaml file: a pod and the node settings the
// translation reads. DNS comes from testdata/resolv.conf through DNSSource.forPod.
type sandboxGoldenCase struct {
	Attempt       uint32   `json:"attempt"`
	NodeName      string   `json:"nodeName"`
	PodLogRoot    string   `json:"podLogRoot"`
	CgroupRoot    string   `json:"cgroupRoot"`
	CgroupDriver  string   `json:"cgroupDriver"`
	ClusterDNS    []string `json:"clusterDNS"`
	ClusterDomain string   `json:"clusterDomain"`
	Pod           v1.Pod   `json:"pod"`
	// RuntimeHandler is the handler of the pod's RuntimeClass, on a runtime reporting
	// containerd 2.x's handlers (containerd2Status).
	RuntimeHandler string `json:"RuntimeHandler"`
	// WantError is the error expected instead of a config.
	WantError string `json:"wantError"`
}

// goldenUserns is the pod's UsernsOptions as podUsernsOptions decides them on a runtime with
// containerd 2.x's handlers; a pod with its own user namespace gets the second range.
func goldenUserns(pod *v1.Pod, handler string) (*runtimeapi.UserNamespace, error) {
	caps := CapabilitiesOf(containerd2Status())
	req, err := UsernsRequestFor(pod, handler, &caps)
	if err != nil {
		return nil, err
	}
	if req == UsernsPod {
		return PodUserns(IDRange{First: 2 * idsPerPod, Length: idsPerPod}), nil
	}
	return NodeUserns(), nil
}

// goldenMounts are the CRI mounts of the container's volume mounts as the volume manager gives
// them (under the pod's directory), made recursively read-only as the handler allows.
func goldenMounts(pod *v1.Pod, c *v1.Container, handler string) ([]*runtimeapi.Mount, error) {
	var out []*runtimeapi.Mount
	for _, vm := range c.VolumeMounts {
		out = append(out, &runtimeapi.Mount{
			ContainerPath: vm.MountPath,
			HostPath:      "/var/lib/vk-cri/pods/" + string(pod.UID) + "/volumes/" + vm.Name,
			Readonly:      vm.ReadOnly,
		})
	}
	caps := CapabilitiesOf(containerd2Status())
	if err := ApplyRecursiveReadOnly(c, out, caps.SupportsRecursiveReadOnly(handler)); err != nil {
		return nil, err
	}
	return out, nil
}

// containerGoldenCase is one testdata/container/*.yaml file: a pod, the container of it to
// translate (regular, init or ephemeral), and the facts of the start.
type containerGoldenCase struct {
	Container string `json:"container"`
	// TargetID is the runtime ID of an ephemeral container's target.
	TargetID     string `json:"targetID"`
	ImageRef     string `json:"imageRef"`
	RestartCount int    `json:"restartCount"`
	Owner        string `json:"owner"`
	Pod          v1.Pod `json:"pod"`
	// Env, when given, is the resolved environment (as ResolveEnv would give it); otherwise
	// the container's literal env.
	Env []v1.EnvVar `json:"env"`
	// ImageUID and ImageUser are the image's default user.
	ImageUID  *int64 `json:"imageUID"`
	ImageUser string `json:"ImageUser"`
	// WantError is the CreateContainerConfigError message expected instead of a config.
	WantError string `json:"wantError"`
	// RuntimeHandler is the handler of the pod's RuntimeClass (see sandboxGoldenCase).
	RuntimeHandler string `json:"RuntimeHandler"`
	// MountVolumes gives the container the mounts of its volumeMounts (goldenMounts).
	MountVolumes bool `json:"mountVolumes"`
}

// canonicalJSON re-indents JSON with sorted keys: protojson's whitespace is deliberately
// unstable, so goldens are compared after this normalisation.
func canonicalJSON(t testing.TB, b []byte) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, b)
	}
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(out, '\n')
}

func protoJSON(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := protojson.MarshalOptions{Multiline: true}.Marshal(m)
	if err != nil {
		t.Fatalf("protojson: %v", err)
	}
	return canonicalJSON(t, b)
}

// checkGolden compares got (canonical JSON) with the golden file, or rewrites it with -update.
func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	golden.CheckNormalized(t, path, got, canonicalJSON)
}

func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func goldenInputs(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no inputs in testdata/%s", dir)
	}
	return files
}

func goldenPath(input string) string {
	return strings.TrimSuffix(input, ".yaml") + ".golden.json"
}

func TestSandboxConfigGolden(t *testing.T) {
	for _, in := range goldenInputs(t, "sandbox") {
		t.Run(filepath.Base(in), func(t *testing.T) {
			var tc sandboxGoldenCase
			readYAML(t, in, &tc)
			env := SandboxEnv{NodeName: tc.NodeName, PodLogRoot: tc.PodLogRoot, CgroupRoot: tc.CgroupRoot, CgroupDriver: cm.Driver(tc.CgroupDriver), ClusterDomain: tc.ClusterDomain}
			if env.NodeName == "" {
				env.NodeName = "vk-node-1"
			}
			if env.PodLogRoot == "" {
				env.PodLogRoot = "/var/log/pods"
			}
			if env.CgroupRoot == "" {
				env.CgroupRoot = "/"
			}
			dns, err := DNSSource{Path: filepath.Join("testdata", "resolv.conf"), ClusterDNS: tc.ClusterDNS, ClusterDomain: tc.ClusterDomain}.ForPod(&tc.Pod)
			if err != nil {
				t.Fatalf("forPod: %v", err)
			}
			env.DNS = dns
			before := tc.Pod.DeepCopy()
			env.Userns, err = goldenUserns(&tc.Pod, tc.RuntimeHandler)
			if tc.WantError != "" {
				if err == nil || err.Error() != tc.WantError {
					t.Fatalf("error = %v, want %q", err, tc.WantError)
				}
				return
			}
			if err != nil {
				t.Fatalf("user namespace: %v", err)
			}
			cfg, err := SandboxConfig(env, &tc.Pod, tc.Attempt)
			if err != nil {
				t.Fatalf("SandboxConfig: %v", err)
			}
			checkGolden(t, goldenPath(in), protoJSON(t, cfg))
			if !equalPods(before, &tc.Pod) {
				t.Errorf("SandboxConfig modified the pod")
			}
		})
	}
}

func TestContainerConfigGolden(t *testing.T) {
	for _, in := range goldenInputs(t, "container") {
		t.Run(filepath.Base(in), func(t *testing.T) {
			var tc containerGoldenCase
			readYAML(t, in, &tc)
			c := findSpecContainer(&tc.Pod, tc.Container)
			if c == nil {
				t.Fatalf("no container %q in the pod", tc.Container)
			}
			owner := tc.Owner
			if owner == "" {
				owner = "vk-node-1"
			}
			env := literalEnv(c)
			if tc.Env != nil {
				env = ContainerEnvironment{Values: map[string]string{}}
				for _, kv := range tc.Env {
					env.List = append(env.List, &runtimeapi.KeyValue{Key: kv.Name, Value: []byte(kv.Value)})
					env.Values[kv.Name] = kv.Value
				}
			}
			node := NodeFacts{MemoryCapacity: 8 << 30, SeccompRoot: "/var/lib/vk-cri/seccomp"}
			// As prepareContainer: the mounts first, then the user namespace.
			var mounts []*runtimeapi.Mount
			var err error
			if tc.MountVolumes {
				mounts, err = goldenMounts(&tc.Pod, c, tc.RuntimeHandler)
			}
			var userns *runtimeapi.UserNamespace
			if err == nil {
				userns, err = goldenUserns(&tc.Pod, tc.RuntimeHandler)
			}
			var cfg *runtimeapi.ContainerConfig
			if err == nil {
				cfg, err = ContainerConfig(node, ContainerInput{
					Owner: owner, Pod: &tc.Pod, Container: c, ImageRef: tc.ImageRef, RestartCount: tc.RestartCount,
					Env: env, Image: ImageUser{UID: tc.ImageUID, Username: tc.ImageUser}, TargetID: tc.TargetID,
					Mounts: mounts, Userns: userns,
				})
			}
			if tc.WantError != "" {
				if err == nil || err.Error() != tc.WantError {
					t.Fatalf("ContainerConfig error = %v, want %q", err, tc.WantError)
				}
				return
			}
			if err != nil {
				t.Fatalf("ContainerConfig: %v", err)
			}
			checkGolden(t, goldenPath(in), protoJSON(t, cfg))
		})
	}
}

func findSpecContainer(pod *v1.Pod, name string) *v1.Container {
	for _, list := range [][]v1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	for i := range pod.Spec.EphemeralContainers {
		if ec := &pod.Spec.EphemeralContainers[i]; ec.Name == name {
			// An ephemeral container runs as a container with the same fields.
			return (*v1.Container)(&ec.EphemeralContainerCommon)
		}
	}
	return nil
}

func equalPods(a, b *v1.Pod) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// The golden files pin whole configs; these check the rules behind a few fields directly.

func TestPodHostname(t *testing.T) {
	long := strings.Repeat("a", 62) + "-bcdef"      // cut at 63 ends with '-'
	longDots := strings.Repeat("b", 61) + ".-.tail" // cut at 63 ends with ".-"
	exact := strings.Repeat("c", 63)                // exactly 63: kept
	over := strings.Repeat("d", 63) + "e"           // 64: cut to 63
	cases := []struct {
		name     string
		podName  string
		hostname string
		hostNet  bool
		want     string
	}{
		{"pod name", "web-0", "", false, "web-0"},
		{"spec.hostname wins", "web-0", "db", false, "db"},
		{"host network: empty", "web-0", "db", true, ""},
		{"63 characters kept", exact, "", false, exact},
		{"64 characters cut to 63", over, "", false, over[:63]},
		{"trailing '-' after the cut is trimmed", long, "", false, strings.Repeat("a", 62)},
		{"trailing '.' and '-' after the cut are trimmed", longDots, "", false, strings.Repeat("b", 61)},
	}
	for _, tc := range cases {
		pod := testPod()
		pod.Name, pod.Spec.Hostname, pod.Spec.HostNetwork = tc.podName, tc.hostname, tc.hostNet
		if got, _ := podHostname(pod, "cluster.local"); got != tc.want {
			t.Errorf("%s: podHostname = %q, want %q", tc.name, got, tc.want)
		}
	}

	t.Run("hostnameOverride", func(t *testing.T) {
		pod := testPod()
		pod.Spec.HostnameOverride = ptrTo("custom.example")
		got, _ := podHostname(pod, "cluster.local")
		knownBugIf(t, got != "custom.example",
			"spec.hostnameOverride (GA and locked on in v1.37) is ignored: the sandbox hostname is the pod name",
			fmt.Sprintf("- custom.example\n+ %s", got))
	})
}

// knownBugIf is knownBug for a plain condition.
func knownBugIf(t *testing.T, differs bool, bug, diff string) {
	t.Helper()
	if !differs {
		diff = ""
	}
	knownBug(t, bug, diff)
}

// The parents the kubelet gives the runtime (GetPodCgroupParent): cgroupfs paths, or with the
// systemd driver the expanded slice path of its ToSystemd doc example
// (/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid, '-' as '_'>.slice).
func TestPodCgroupParent(t *testing.T) {
	cases := []struct {
		root   string
		driver cm.Driver
		qos    v1.PodQOSClass
		want   string
	}{
		{"/", "", v1.PodQOSGuaranteed, "/kubepods/poduid-1"},
		{"/", cm.DriverCgroupfs, v1.PodQOSBurstable, "/kubepods/burstable/poduid-1"},
		{"/", "", v1.PodQOSBestEffort, "/kubepods/besteffort/poduid-1"},
		{"/", "", "", "/kubepods/besteffort/poduid-1"},
		{"/vk-cri", "", v1.PodQOSBurstable, "/vk-cri/kubepods/burstable/poduid-1"},
		{"/vk-cri/", "", v1.PodQOSGuaranteed, "/vk-cri/kubepods/poduid-1"},
		{"/", cm.DriverSystemd, v1.PodQOSGuaranteed, "/kubepods.slice/kubepods-poduid_1.slice"},
		{"/", cm.DriverSystemd, v1.PodQOSBurstable, "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-poduid_1.slice"},
		{"/", cm.DriverSystemd, v1.PodQOSBestEffort, "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-poduid_1.slice"},
		{"/vk-cri", cm.DriverSystemd, v1.PodQOSBurstable, "/vk_cri.slice/vk_cri-kubepods.slice/vk_cri-kubepods-burstable.slice/vk_cri-kubepods-burstable-poduid_1.slice"},
	}
	for _, tc := range cases {
		pod := testPod()
		pod.Status.QOSClass = tc.qos
		if got, err := podCgroupParent(tc.root, tc.driver, pod); err != nil || got != tc.want {
			t.Errorf("podCgroupParent(%q, %q, %q) = %q (%v), want %q", tc.root, tc.driver, tc.qos, got, err, tc.want)
		}
	}
	if _, err := podCgroupParent("/", "other", testPod()); err == nil {
		t.Error("an unknown driver gives a parent")
	}
}

func TestPodLogDir(t *testing.T) {
	if got, want := PodLogDir("/var/log/pods", testPod()), "/var/log/pods/default_web_uid-1"; got != want {
		t.Errorf("PodLogDir = %q, want %q", got, want)
	}
}

func TestNamespaceOptions(t *testing.T) {
	cases := []struct {
		name string
		mod  func(*v1.Pod)
		want *runtimeapi.NamespaceOption
	}{
		{"defaults", func(*v1.Pod) {}, &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_POD, Pid: runtimeapi.NamespaceMode_CONTAINER, Ipc: runtimeapi.NamespaceMode_POD}},
		{"hostNetwork", func(p *v1.Pod) { p.Spec.HostNetwork = true }, &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_NODE, Pid: runtimeapi.NamespaceMode_CONTAINER, Ipc: runtimeapi.NamespaceMode_POD}},
		{"hostIPC", func(p *v1.Pod) { p.Spec.HostIPC = true }, &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_POD, Pid: runtimeapi.NamespaceMode_CONTAINER, Ipc: runtimeapi.NamespaceMode_NODE}},
		{"hostPID", func(p *v1.Pod) { p.Spec.HostPID = true }, &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_POD, Pid: runtimeapi.NamespaceMode_NODE, Ipc: runtimeapi.NamespaceMode_POD}},
		{"shareProcessNamespace", func(p *v1.Pod) { p.Spec.ShareProcessNamespace = ptrTo(true) }, &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_POD, Pid: runtimeapi.NamespaceMode_POD, Ipc: runtimeapi.NamespaceMode_POD}},
		{"shareProcessNamespace false", func(p *v1.Pod) { p.Spec.ShareProcessNamespace = ptrTo(false) }, &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_POD, Pid: runtimeapi.NamespaceMode_CONTAINER, Ipc: runtimeapi.NamespaceMode_POD}},
	}
	for _, tc := range cases {
		pod := testPod()
		tc.mod(pod)
		if got := namespaceOptions(pod); !proto.Equal(got, tc.want) {
			t.Errorf("%s: namespaceOptions = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestAnyPrivileged(t *testing.T) {
	priv := func(c v1.Container, p *bool) v1.Container {
		c.SecurityContext = &v1.SecurityContext{Privileged: p}
		return c
	}
	cases := []struct {
		name string
		pod  *v1.Pod
		want bool
	}{
		{"none", testPod(), false},
		{"security context without privileged", testPod(withContainers(priv(ctr("a"), nil))), false},
		{"privileged false", testPod(withContainers(priv(ctr("a"), ptrTo(false)))), false},
		{"regular container privileged", testPod(withContainers(ctr("a"), priv(ctr("b"), ptrTo(true)))), true},
		{"init container privileged", testPod(withInit(priv(ctr("i"), ptrTo(true))), withContainers(ctr("a"))), true},
	}
	for _, tc := range cases {
		if got := anyPrivileged(tc.pod); got != tc.want {
			t.Errorf("%s: anyPrivileged = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestContainerHash(t *testing.T) {
	base := ctr("a")
	h := ContainerHash(&base)
	if h == "" {
		t.Fatal("empty hash")
	}
	if again := ContainerHash(&base); again != h {
		t.Errorf("hash not stable: %q then %q", h, again)
	}
	other := base
	other.Image = "a:2.0"
	if ContainerHash(&other) == h {
		t.Errorf("image change does not change the hash")
	}
	renamed := base
	renamed.Name = "b"
	if ContainerHash(&renamed) == h {
		t.Errorf("name change does not change the hash")
	}
	cmd := base
	cmd.Command = []string{"sleep", "1"}
	cmd.Env = []v1.EnvVar{{Name: "X", Value: "1"}}
	if ContainerHash(&cmd) != h {
		t.Errorf("command/env change changes the hash; only the image may change on a live pod")
	}
	// The separator keeps name/image boundaries apart.
	x, y := v1.Container{Name: "ab", Image: "c"}, v1.Container{Name: "a", Image: "bc"}
	if ContainerHash(&x) == ContainerHash(&y) {
		t.Errorf("hash(ab, c) == hash(a, bc)")
	}
}

func TestContainerLogPath(t *testing.T) {
	cases := []struct {
		name string
		n    int
		want string
	}{
		{"app", 0, "app/0.log"},
		{"app", 12, "app/12.log"},
		{"init-db", 1, "init-db/1.log"},
	}
	for _, tc := range cases {
		if got := ContainerLogPath(tc.name, tc.n); got != tc.want {
			t.Errorf("ContainerLogPath(%q, %d) = %q, want %q", tc.name, tc.n, got, tc.want)
		}
	}
}

func TestLiteralEnv(t *testing.T) {
	c := v1.Container{Env: []v1.EnvVar{
		{Name: "A", Value: "1"},
		{Name: "REF", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		{Name: "EMPTY"},
		{Name: "B", Value: "x=y"},
	}}
	got := literalEnv(&c).List
	want := []*runtimeapi.KeyValue{{Key: "A", Value: []byte("1")}, {Key: "EMPTY", Value: []byte("")}, {Key: "B", Value: []byte("x=y")}}
	if len(got) != len(want) {
		t.Fatalf("literalEnv = %v, want %v", got, want)
	}
	for i := range want {
		if !proto.Equal(got[i], want[i]) {
			t.Errorf("env[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	if got := literalEnv(&v1.Container{}).List; got == nil || len(got) != 0 {
		t.Errorf("literalEnv of no env = %#v, want an empty non-nil list", got)
	}
}

func TestPortMappings(t *testing.T) {
	pod := testPod(withInit(v1.Container{Name: "i", Ports: []v1.ContainerPort{{ContainerPort: 1, HostPort: 1}}}),
		withContainers(
			v1.Container{Name: "a", Ports: []v1.ContainerPort{
				{ContainerPort: 80, HostPort: 8080},
				{ContainerPort: 81},
				{ContainerPort: 53, HostPort: 5353, Protocol: v1.ProtocolUDP, HostIP: "127.0.0.1"},
			}},
			v1.Container{Name: "b", Ports: []v1.ContainerPort{{ContainerPort: 9, HostPort: 9, Protocol: v1.ProtocolSCTP}}},
		))
	got := portMappings(pod)
	want := []*runtimeapi.PortMapping{
		{Protocol: runtimeapi.Protocol_TCP, ContainerPort: 80, HostPort: 8080},
		{Protocol: runtimeapi.Protocol_UDP, ContainerPort: 53, HostPort: 5353, HostIp: "127.0.0.1"},
		{Protocol: runtimeapi.Protocol_SCTP, ContainerPort: 9, HostPort: 9},
	}
	if len(got) != len(want) {
		t.Fatalf("portMappings = %v, want %v", got, want)
	}
	for i := range want {
		if !proto.Equal(got[i], want[i]) {
			t.Errorf("mapping %d = %v, want %v", i, got[i], want[i])
		}
	}
}

// The pod- and container-level security settings combine as in the kubelet: the container's
// runAsUser/runAsGroup win, the groups come from the pod.
func TestContainerSecurityContext(t *testing.T) {
	pod := testPod()
	pod.Spec.SecurityContext = &v1.PodSecurityContext{
		RunAsUser:          ptrTo(int64(1000)),
		RunAsGroup:         ptrTo(int64(2000)),
		FSGroup:            ptrTo(int64(3000)),
		SupplementalGroups: []int64{4000, 4001},
	}
	c := ctr("a")
	c.SecurityContext = &v1.SecurityContext{RunAsUser: ptrTo(int64(1)), ReadOnlyRootFilesystem: ptrTo(true)}
	sc, err := containerSecurityContext(NodeFacts{}, pod, &c, ImageUser{})
	if err != nil {
		t.Fatal(err)
	}
	if sc.RunAsUser.GetValue() != 1 {
		t.Errorf("runAsUser = %v, want the container's 1", sc.RunAsUser)
	}
	if sc.RunAsGroup.GetValue() != 2000 {
		t.Errorf("runAsGroup = %v, want the pod's 2000", sc.RunAsGroup)
	}
	if !sc.ReadonlyRootfs || sc.Privileged {
		t.Errorf("readonlyRootfs = %v, privileged = %v", sc.ReadonlyRootfs, sc.Privileged)
	}
	groups := map[int64]bool{}
	for _, g := range sc.SupplementalGroups {
		groups[g] = true
	}
	for _, g := range []int64{3000, 4000, 4001} {
		if !groups[g] {
			t.Errorf("supplementalGroups %v lack %d", sc.SupplementalGroups, g)
		}
	}
	if len(sc.SupplementalGroups) != 3 {
		t.Errorf("supplementalGroups = %v, want 3 groups", sc.SupplementalGroups)
	}

	// No security context anywhere: the namespaces, the image's user, no seccomp confinement and
	// the default masked and read-only paths.
	sc, _ = containerSecurityContext(NodeFacts{}, testPod(), &v1.Container{Name: "x"}, ImageUser{UID: ptrTo(int64(5)), Username: "five"})
	want := &runtimeapi.LinuxContainerSecurityContext{
		NamespaceOptions: namespaceOptions(testPod()),
		RunAsUser:        &runtimeapi.Int64Value{Value: 5},
		RunAsUsername:    "five",
		Seccomp:          &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Unconfined},
		MaskedPaths:      baseMaskedPaths,
		ReadonlyPaths:    defaultReadonlyPaths,
	}
	if !proto.Equal(sc, want) {
		t.Errorf("bare container security context = %v, want %v", sc, want)
	}
}
