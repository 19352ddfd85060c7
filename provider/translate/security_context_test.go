package translate

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestVerifyRunAsNonRoot(t *testing.T) {
	uid := func(v int64) *int64 { return &v }
	cases := []struct {
		name    string
		pod     *v1.PodSecurityContext
		c       *v1.SecurityContext
		img     ImageUser
		wantErr string
	}{
		{name: "not asked", img: ImageUser{UID: uid(0)}},
		{name: "runAsNonRoot false", c: &v1.SecurityContext{RunAsNonRoot: ptrTo(false)}, img: ImageUser{UID: uid(0)}},
		{name: "image root", c: &v1.SecurityContext{RunAsNonRoot: ptrTo(true)}, img: ImageUser{UID: uid(0)},
			wantErr: `container has runAsNonRoot and image will run as root (pod: "web_default(uid-1)", container: app)`},
		{name: "pod-level runAsNonRoot applies", pod: &v1.PodSecurityContext{RunAsNonRoot: ptrTo(true)}, img: ImageUser{UID: uid(0)},
			wantErr: "image will run as root"},
		{name: "image non-root", c: &v1.SecurityContext{RunAsNonRoot: ptrTo(true)}, img: ImageUser{UID: uid(1000)}},
		{name: "named image user", c: &v1.SecurityContext{RunAsNonRoot: ptrTo(true)}, img: ImageUser{Username: "app"},
			wantErr: "image has non-numeric user (app), cannot verify user is non-root"},
		{name: "runAsUser 0", c: &v1.SecurityContext{RunAsNonRoot: ptrTo(true), RunAsUser: ptrTo(int64(0))}, img: ImageUser{UID: uid(1000)},
			wantErr: `container's runAsUser breaks non-root policy (pod: "web_default(uid-1)", container: app)`},
		{name: "pod runAsUser non-root wins over a root image", pod: &v1.PodSecurityContext{RunAsNonRoot: ptrTo(true), RunAsUser: ptrTo(int64(5))}, img: ImageUser{UID: uid(0)}},
		{name: "container runAsUser wins over the pod's", pod: &v1.PodSecurityContext{RunAsNonRoot: ptrTo(true), RunAsUser: ptrTo(int64(5))},
			c: &v1.SecurityContext{RunAsUser: ptrTo(int64(0))}, wantErr: "breaks non-root policy"},
		{name: "invalid image uid", c: &v1.SecurityContext{RunAsNonRoot: ptrTo(true)}, img: ImageUser{UID: uid(-5)},
			wantErr: "image has an invalid user id (-5)"},
	}
	for _, tc := range cases {
		pod := testPod()
		pod.Spec.SecurityContext = tc.pod
		pod.Spec.Containers[0].SecurityContext = tc.c
		err := verifyRunAsNonRoot(pod, &pod.Spec.Containers[0], tc.img)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: unexpected error %v", tc.name, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.wantErr)
		}
	}
}

func TestSeccompProfile(t *testing.T) {
	cases := []struct {
		in      *v1.SeccompProfile
		want    *runtimeapi.SecurityProfile
		wantErr bool
	}{
		{nil, &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Unconfined}, false},
		{&v1.SeccompProfile{Type: v1.SeccompProfileTypeUnconfined}, &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Unconfined}, false},
		{&v1.SeccompProfile{Type: v1.SeccompProfileTypeRuntimeDefault}, &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault}, false},
		{&v1.SeccompProfile{Type: v1.SeccompProfileTypeLocalhost, LocalhostProfile: ptrTo("a/b.json")},
			&runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Localhost, LocalhostRef: "/root/seccomp/a/b.json"}, false},
		{&v1.SeccompProfile{Type: v1.SeccompProfileTypeLocalhost}, nil, true},
	}
	for _, tc := range cases {
		got, err := seccompProfile("/root/seccomp", tc.in)
		if (err != nil) != tc.wantErr || !proto.Equal(got, tc.want) {
			t.Errorf("seccompProfile(%v) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

// The container's seccomp profile wins over the pod's; capabilities come only from the
// container; Unmasked procMount clears the masked and read-only paths.
func TestContainerSecurityContextMerge(t *testing.T) {
	pod := testPod()
	pod.Spec.SecurityContext = &v1.PodSecurityContext{
		SeccompProfile: &v1.SeccompProfile{Type: v1.SeccompProfileTypeRuntimeDefault},
		SELinuxOptions: &v1.SELinuxOptions{Level: "s0:c1"},
	}
	c := &pod.Spec.Containers[0]
	c.SecurityContext = &v1.SecurityContext{
		SeccompProfile:           &v1.SeccompProfile{Type: v1.SeccompProfileTypeUnconfined},
		Capabilities:             &v1.Capabilities{Add: []v1.Capability{"SYS_TIME"}},
		ProcMount:                ptrTo(v1.UnmaskedProcMount),
		AllowPrivilegeEscalation: ptrTo(true),
	}
	sc, err := containerSecurityContext(NodeFacts{MaskedPaths: []string{"/x"}}, pod, c, ImageUser{UID: new(int64)})
	if err != nil {
		t.Fatal(err)
	}
	if sc.Seccomp.ProfileType != runtimeapi.SecurityProfile_Unconfined {
		t.Errorf("seccomp %v, want the container's Unconfined", sc.Seccomp)
	}
	if sc.SelinuxOptions.GetLevel() != "s0:c1" {
		t.Errorf("SELinux %v, want the pod's", sc.SelinuxOptions)
	}
	if diff := cmp.Diff([]string{"SYS_TIME"}, sc.Capabilities.GetAddCapabilities()); diff != "" {
		t.Errorf("capabilities: %s", diff)
	}
	if len(sc.MaskedPaths) != 0 || len(sc.ReadonlyPaths) != 0 || sc.MaskedPaths == nil {
		t.Errorf("Unmasked: masked %v read-only %v, want both empty", sc.MaskedPaths, sc.ReadonlyPaths)
	}
	if sc.NoNewPrivs {
		t.Errorf("allowPrivilegeEscalation true sets no_new_privs")
	}
	c.SecurityContext = nil
	sc, _ = containerSecurityContext(NodeFacts{MaskedPaths: []string{"/x"}}, pod, c, ImageUser{})
	if diff := cmp.Diff([]string{"/x"}, sc.MaskedPaths); diff != "" {
		t.Errorf("the node's masked paths: %s", diff)
	}
	pod.Spec.SecurityContext.SupplementalGroupsPolicy = ptrTo(v1.SupplementalGroupsPolicy("Bogus"))
	if _, err := containerSecurityContext(NodeFacts{}, pod, c, ImageUser{}); err == nil {
		t.Errorf("an unknown supplementalGroupsPolicy: no error")
	}
}

func TestDefaultMaskedPaths(t *testing.T) {
	exists := map[string]bool{
		"/sys/devices/system/cpu/cpu0":                  true,
		"/sys/devices/system/cpu/cpu0/thermal_throttle": true,
		"/sys/devices/system/cpu/cpu1":                  true,
	}
	got := DefaultMaskedPaths(func(p string) bool { return exists[p] })
	want := append(append([]string(nil), baseMaskedPaths...), "/sys/devices/system/cpu/cpu0/thermal_throttle")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestImageUserOf(t *testing.T) {
	if u := ImageUserOf(nil); u.UID == nil || *u.UID != 0 || u.Username != "" {
		t.Errorf("no image: %+v, want root", u)
	}
	if u := ImageUserOf(&runtimeapi.Image{}); u.UID == nil || *u.UID != 0 {
		t.Errorf("image without a user: %+v, want root", u)
	}
	if u := ImageUserOf(&runtimeapi.Image{Uid: &runtimeapi.Int64Value{Value: 7}, Username: "x"}); u.UID == nil || *u.UID != 7 || u.Username != "" {
		t.Errorf("numeric user: %+v", u)
	}
	if u := ImageUserOf(&runtimeapi.Image{Username: "app"}); u.UID != nil || u.Username != "app" {
		t.Errorf("named user: %+v", u)
	}
}
