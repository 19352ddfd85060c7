package provider

import (
	"testing"

	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestUsernsRequestFor(t *testing.T) {
	c2 := capabilitiesOf(containerd2Status())
	c16 := capabilitiesOf(&runtimeapi.StatusResponse{})
	cases := []struct {
		name      string
		hostUsers *bool
		handler   string
		caps      *runtimeCapabilities
		want      usernsRequest
		wantErr   string
	}{
		{"hostUsers unset", nil, "", &c2, usernsNode, ""},
		{"hostUsers true", ptrTo(true), "", &c2, usernsNode, ""},
		{"hostUsers unset on containerd 1.6", nil, "", &c16, usernsNode, ""},
		{"hostUsers false, default handler", ptrTo(false), "", &c2, usernsPod, ""},
		{"hostUsers false, runc", ptrTo(false), "runc", &c2, usernsPod, ""},
		// The kubelet's messages (pkg/kubelet/userns/userns_manager.go).
		{"hostUsers false on containerd 1.6", ptrTo(false), "", &c16, usernsNode,
			"can't set `spec.hostUsers: false`, runtime does not support user namespaces"},
		{"hostUsers false, crun", ptrTo(false), "crun", &c2, usernsNode,
			"can't set `spec.hostUsers: false`, RuntimeClass handler \"crun\" does not support user namespaces"},
		{"hostUsers false, unknown handler", ptrTo(false), "kata", &c2, usernsNode,
			"can't set `spec.hostUsers: false`, RuntimeClass handler \"kata\" does not support user namespaces: the handler \"kata\" is not known"},
		{"hostUsers false before any runtime status", ptrTo(false), "", nil, usernsNode,
			"can't set `spec.hostUsers: false`, runtime does not support user namespaces"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := testPod()
			pod.Spec.HostUsers = tc.hostUsers
			got, err := usernsRequestFor(pod, tc.handler, tc.caps)
			if got != tc.want || errString(err) != tc.wantErr {
				t.Errorf("usernsRequestFor = %v, %v; want %v, %q", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestIdmapMounts(t *testing.T) {
	us := podUserns(idRange{First: 3 * usernsIDsPerPod, Length: usernsIDsPerPod})
	want := []*runtimeapi.IDMapping{{HostId: 196608, ContainerId: 0, Length: 65536}}
	if !proto.Equal(&runtimeapi.UserNamespace{Mode: runtimeapi.NamespaceMode_POD, Uids: want, Gids: want}, us) {
		t.Fatalf("podUserns = %v", us)
	}
	cfg := &runtimeapi.ContainerConfig{
		Mounts: []*runtimeapi.Mount{{ContainerPath: "/data"}, {ContainerPath: "/etc/hosts"}},
		Linux: &runtimeapi.LinuxContainerConfig{SecurityContext: &runtimeapi.LinuxContainerSecurityContext{
			NamespaceOptions: &runtimeapi.NamespaceOption{UsernsOptions: us}}},
	}
	idmapMounts(cfg)
	for _, m := range cfg.Mounts {
		if len(m.UidMappings) != 1 || !proto.Equal(m.UidMappings[0], want[0]) || !proto.Equal(m.GidMappings[0], want[0]) {
			t.Errorf("mount %s: uid %v gid %v, want the pod's mapping", m.ContainerPath, m.UidMappings, m.GidMappings)
		}
	}
	// In the node's user namespace mounts carry no mapping.
	cfg.Linux.SecurityContext.NamespaceOptions.UsernsOptions = nodeUserns()
	idmapMounts(cfg)
	for _, m := range cfg.Mounts {
		if m.UidMappings != nil || m.GidMappings != nil {
			t.Errorf("mount %s in the node's user namespace: mappings %v %v", m.ContainerPath, m.UidMappings, m.GidMappings)
		}
	}
}

// The pod's user namespace reaches both the sandbox and its containers; a pod that asks for one
// on a handler that has none is refused before anything runs.
func TestPodUsernsOptions(t *testing.T) {
	f := newWorkerFixture(t, nil, podRuntime{})
	f.p.userns = newUsernsAllocator(t.TempDir(), nil)
	f.p.observeRuntimeStatus(containerd2Status())
	classes := fakeRuntimeClasses{"fast": "crun", "secure": "runc"}
	f.p.cfg.RuntimeClasses = classes

	pod := testPod()
	if got, err := f.p.podUsernsOptions(pod); err != nil || !proto.Equal(got, nodeUserns()) {
		t.Fatalf("plain pod: %v, %v; want NODE", got, err)
	}
	pod.Spec.HostUsers = ptrTo(false)
	got, err := f.p.podUsernsOptions(pod)
	if err != nil || got.Mode != runtimeapi.NamespaceMode_POD || got.Uids[0].HostId != usernsIDsPerPod {
		t.Fatalf("hostUsers false: %v, %v; want POD from the first range", got, err)
	}
	again, _ := f.p.podUsernsOptions(pod)
	if !proto.Equal(got, again) {
		t.Errorf("second call: %v, want the same range %v", again, got)
	}
	pod.Spec.RuntimeClassName = ptrTo("secure")
	if got, err := f.p.podUsernsOptions(pod); err != nil || got.Mode != runtimeapi.NamespaceMode_POD {
		t.Errorf("hostUsers false with runc: %v, %v", got, err)
	}

	other := testPod()
	other.UID = "other"
	other.Spec.HostUsers = ptrTo(false)
	other.Spec.RuntimeClassName = ptrTo("fast")
	if _, err := f.p.podUsernsOptions(other); errString(err) != "can't set `spec.hostUsers: false`, RuntimeClass handler \"crun\" does not support user namespaces" {
		t.Errorf("crun: err %v", err)
	}
	other.Spec.RuntimeClassName = ptrTo("gone")
	if _, err := f.p.podUsernsOptions(other); errString(err) != `runtimeclass.node.k8s.io "gone" not found` {
		t.Errorf("missing RuntimeClass: err %v", err)
	}
	if n := f.p.userns.allocated(); n != 1 {
		t.Errorf("%d ranges allocated, want 1 (refused pods get none)", n)
	}
}
