package translate

import (
	"testing"

	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestUsernsRequestFor(t *testing.T) {
	c2 := CapabilitiesOf(containerd2Status())
	c16 := CapabilitiesOf(&runtimeapi.StatusResponse{})
	cases := []struct {
		name      string
		hostUsers *bool
		handler   string
		caps      *RuntimeCapabilities
		want      UsernsRequest
		wantErr   string
	}{
		{"hostUsers unset", nil, "", &c2, UsernsNode, ""},
		{"hostUsers true", ptrTo(true), "", &c2, UsernsNode, ""},
		{"hostUsers unset on containerd 1.6", nil, "", &c16, UsernsNode, ""},
		{"hostUsers false, default handler", ptrTo(false), "", &c2, UsernsPod, ""},
		{"hostUsers false, runc", ptrTo(false), "runc", &c2, UsernsPod, ""},
		// The kubelet's messages (pkg/kubelet/userns/userns_manager.go).
		{"hostUsers false on containerd 1.6", ptrTo(false), "", &c16, UsernsNode,
			"can't set `spec.hostUsers: false`, runtime does not support user namespaces"},
		{"hostUsers false, crun", ptrTo(false), "crun", &c2, UsernsNode,
			"can't set `spec.hostUsers: false`, RuntimeClass handler \"crun\" does not support user namespaces"},
		{"hostUsers false, unknown handler", ptrTo(false), "kata", &c2, UsernsNode,
			"can't set `spec.hostUsers: false`, RuntimeClass handler \"kata\" does not support user namespaces: the handler \"kata\" is not known"},
		{"hostUsers false before any runtime status", ptrTo(false), "", nil, UsernsNode,
			"can't set `spec.hostUsers: false`, runtime does not support user namespaces"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := testPod()
			pod.Spec.HostUsers = tc.hostUsers
			got, err := UsernsRequestFor(pod, tc.handler, tc.caps)
			if got != tc.want || errString(err) != tc.wantErr {
				t.Errorf("UsernsRequestFor = %v, %v; want %v, %q", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestIdmapMounts(t *testing.T) {
	us := PodUserns(IDRange{First: 3 * idsPerPod, Length: idsPerPod})
	want := []*runtimeapi.IDMapping{{HostId: 196608, ContainerId: 0, Length: 65536}}
	if !proto.Equal(&runtimeapi.UserNamespace{Mode: runtimeapi.NamespaceMode_POD, Uids: want, Gids: want}, us) {
		t.Fatalf("PodUserns = %v", us)
	}
	cfg := &runtimeapi.ContainerConfig{
		Mounts: []*runtimeapi.Mount{{ContainerPath: "/data"}, {ContainerPath: "/etc/hosts"}},
		Linux: &runtimeapi.LinuxContainerConfig{SecurityContext: &runtimeapi.LinuxContainerSecurityContext{
			NamespaceOptions: &runtimeapi.NamespaceOption{UsernsOptions: us}}},
	}
	IDMapMounts(cfg)
	for _, m := range cfg.Mounts {
		if len(m.UidMappings) != 1 || !proto.Equal(m.UidMappings[0], want[0]) || !proto.Equal(m.GidMappings[0], want[0]) {
			t.Errorf("mount %s: uid %v gid %v, want the pod's mapping", m.ContainerPath, m.UidMappings, m.GidMappings)
		}
	}
	// In the node's user namespace mounts carry no mapping.
	cfg.Linux.SecurityContext.NamespaceOptions.UsernsOptions = NodeUserns()
	IDMapMounts(cfg)
	for _, m := range cfg.Mounts {
		if m.UidMappings != nil || m.GidMappings != nil {
			t.Errorf("mount %s in the node's user namespace: mappings %v %v", m.ContainerPath, m.UidMappings, m.GidMappings)
		}
	}
}
