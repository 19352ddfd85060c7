package volumes

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/mount-utils"
)

// boundLocalClaim is a claim bound to a local volume at path.
func boundLocalClaim(path string) (*v1.PersistentVolumeClaim, *v1.PersistentVolume) {
	claim := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "claim", Namespace: "ns", UID: "claim-uid"},
		Spec: v1.PersistentVolumeClaimSpec{VolumeName: "local-pv"}, Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimBound}}
	pv := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "local-pv"}, Spec: v1.PersistentVolumeSpec{
		ClaimRef:               &v1.ObjectReference{Namespace: "ns", Name: "claim", UID: "claim-uid"},
		PersistentVolumeSource: v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: path}}}}
	return claim, pv
}

func TestSetUpLocalClaimReadOnlyAndFSGroup(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("changing a directory's group to the fsGroup needs root")
	}
	for _, tc := range []struct {
		name      string
		readOnly  bool
		wantGroup bool
	}{
		{"writable takes the fsGroup", false, true},
		{"read-only is left alone", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := t.TempDir()
			if err := os.WriteFile(filepath.Join(path, "f"), []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
			claim, pv := boundLocalClaim(path)
			client, _ := tokenClient(claim, pv)
			m := New(t.TempDir(), WithClient(client), WithMounter(mount.NewFakeMounter(nil)))
			pod := testPod(v1.Volume{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "claim", ReadOnly: tc.readOnly}}})
			group := int64(4321)
			pod.Spec.SecurityContext = &v1.PodSecurityContext{FSGroup: &group}
			if errs := m.SetUp(context.Background(), pod).errs(); len(errs) != 0 {
				t.Fatal(errs)
			}
			vol, ok := m.store.volume(pod.UID, "data")
			if !ok || vol.Path != path || vol.ReadOnly != tc.readOnly {
				t.Fatalf("volume %+v (%v), want %s read-only %v", vol, ok, path, tc.readOnly)
			}
			for _, p := range []string{path, filepath.Join(path, "f")} {
				fi, err := os.Stat(p)
				if err != nil {
					t.Fatal(err)
				}
				if got := int64(fi.Sys().(*syscall.Stat_t).Gid) == group; got != tc.wantGroup {
					t.Errorf("%s has the fsGroup: %v, want %v", p, got, tc.wantGroup)
				}
			}
		})
	}
}
