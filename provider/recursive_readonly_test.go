package provider

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-cri/vk-cri/provider/translate"
)

func TestResolveRecursiveReadOnly(t *testing.T) {
	mode := func(m v1.RecursiveReadOnlyMode) *v1.RecursiveReadOnlyMode { return &m }
	bidir := v1.MountPropagationBidirectional
	cases := []struct {
		name      string
		mount     v1.VolumeMount
		supported bool
		want      bool
		wantErr   string
		status    v1.RecursiveReadOnlyMode // in the container's status
	}{
		{"read-only, no request", v1.VolumeMount{Name: "v", ReadOnly: true}, true, false, "", v1.RecursiveReadOnlyDisabled},
		{"Disabled", v1.VolumeMount{Name: "v", ReadOnly: true, RecursiveReadOnly: mode(v1.RecursiveReadOnlyDisabled)}, true, false, "", v1.RecursiveReadOnlyDisabled},
		{"IfPossible, handler can", v1.VolumeMount{Name: "v", ReadOnly: true, RecursiveReadOnly: mode(v1.RecursiveReadOnlyIfPossible)}, true, true, "", v1.RecursiveReadOnlyEnabled},
		{"IfPossible, handler cannot", v1.VolumeMount{Name: "v", ReadOnly: true, RecursiveReadOnly: mode(v1.RecursiveReadOnlyIfPossible)}, false, false, "", v1.RecursiveReadOnlyDisabled},
		{"Enabled, handler can", v1.VolumeMount{Name: "v", ReadOnly: true, RecursiveReadOnly: mode(v1.RecursiveReadOnlyEnabled)}, true, true, "", v1.RecursiveReadOnlyEnabled},
		{"Enabled, handler cannot", v1.VolumeMount{Name: "v", ReadOnly: true, RecursiveReadOnly: mode(v1.RecursiveReadOnlyEnabled)}, false, false,
			`volume "v" requested recursive read-only mode, but it is not supported by the runtime`, v1.RecursiveReadOnlyDisabled},
		{"Enabled on a writable mount", v1.VolumeMount{Name: "v", RecursiveReadOnly: mode(v1.RecursiveReadOnlyEnabled)}, true, false,
			`volume "v" requested recursive read-only mode, but it is not read-only`, ""},
		{"Enabled with propagation", v1.VolumeMount{Name: "v", ReadOnly: true, MountPropagation: &bidir, RecursiveReadOnly: mode(v1.RecursiveReadOnlyEnabled)}, true, false,
			`volume "v" requested recursive read-only mode, but it is not compatible with propagation "Bidirectional"`, v1.RecursiveReadOnlyDisabled},
		{"unknown mode", v1.VolumeMount{Name: "v", ReadOnly: true, RecursiveReadOnly: mode("Sometimes")}, true, false,
			`unknown recursive read-only mode "Sometimes"`, v1.RecursiveReadOnlyDisabled},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := translate.ResolveRecursiveReadOnly(tc.mount, tc.supported)
			if got != tc.want || errString(err) != tc.wantErr {
				t.Errorf("resolve = %v, %v; want %v, %q", got, err, tc.want, tc.wantErr)
			}
			c := &v1.Container{Name: "c", VolumeMounts: []v1.VolumeMount{tc.mount}}
			st := volumeMountStatuses(c, tc.supported)
			var gotStatus v1.RecursiveReadOnlyMode
			if st[0].RecursiveReadOnly != nil {
				gotStatus = *st[0].RecursiveReadOnly
			}
			if gotStatus != tc.status {
				t.Errorf("status recursiveReadOnly %q, want %q", gotStatus, tc.status)
			}
			mounts := []*runtimeapi.Mount{{ContainerPath: tc.mount.MountPath, Readonly: tc.mount.ReadOnly}}
			err = translate.ApplyRecursiveReadOnly(c, mounts, tc.supported)
			if tc.wantErr != "" {
				if want := "failed to resolve recursive read-only mode: " + tc.wantErr; errString(err) != want {
					t.Errorf("apply error %v, want %q", err, want)
				}
				return
			}
			if err != nil || mounts[0].RecursiveReadOnly != tc.want {
				t.Errorf("apply: mount recursiveReadOnly %v (err %v), want %v", mounts[0].RecursiveReadOnly, err, tc.want)
			}
		})
	}
}
