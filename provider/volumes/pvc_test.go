package volumes

import (
	"context"
	"errors"
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

// --forbid-host-path covers claims: a local persistent volume, like a hostPath one, is a path
// of the node, and neither is set up (nor its path's ownership changed) on a node that forbids
// them; the error names the volume.
func TestForbiddenHostPathCoversPersistentVolumes(t *testing.T) {
	for _, kind := range []string{"local", "hostPath"} {
		t.Run(kind, func(t *testing.T) {
			path := t.TempDir()
			claim, pv := boundLocalClaim(path)
			if kind == "hostPath" {
				pv.Spec.Local = nil
				pv.Spec.HostPath = &v1.HostPathVolumeSource{Path: path}
			}
			client, _ := tokenClient(claim, pv)
			m := New(t.TempDir(), WithClient(client), WithMounter(mount.NewFakeMounter(nil)), WithForbidHostPath(true))
			pod := testPod(v1.Volume{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "claim"}}})
			group := int64(4321)
			pod.Spec.SecurityContext = &v1.PodSecurityContext{FSGroup: &group}
			errs := m.SetUp(context.Background(), pod).errs()
			if len(errs) != 1 || !errors.Is(errs[0], ErrHostPathForbidden) {
				t.Fatalf("set-up errors %v, want one ErrHostPathForbidden", errs)
			}
			var pvErr *persistentVolumeError
			if !errors.As(errs[0], &pvErr) || pvErr.PV != "local-pv" {
				t.Errorf("error %v does not name the persistent volume", errs[0])
			}
			if _, ok := m.store.volume(pod.UID, "data"); ok {
				t.Error("a forbidden persistent volume was set up")
			}
			if fi, err := os.Stat(path); err != nil || int64(fi.Sys().(*syscall.Stat_t).Gid) == group {
				t.Errorf("the forbidden volume's directory took the fsGroup (%v)", err)
			}
		})
	}
}
