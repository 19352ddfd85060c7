package volumes

import (
	"path/filepath"
	"testing"

	"k8s.io/mount-utils"
)

func TestOnSharedMount(t *testing.T) {
	for _, tc := range []struct {
		table, path string
		want        bool
	}{
		// The VM of the local stack: / is private; the reference kubelet made its root shared.
		{"private-root", "/run/stack/nodes/vk-1", false},
		{"private-root", "/run/stack/ref/root", true},
		{"private-root", "/run/stack/ref/root/pods/x", true},
		{"private-root", "/run/stack/ref/rootless", false},
		// A shared / shares what is below it, unless a private mount lies in between.
		{"shared-root", "/var/lib/vk-cri", true},
		{"shared-root", "/var/lib/private-below/vk", false},
		// Of mounts stacked on one point the last counts; a slave is not shared.
		{"stacked", "/srv/vk", true},
		{"stacked", "/srv/vk/pods", true},
		{"stacked", "/srv/vk-other", false},
		{"stacked", "/srv/vk-other/", false},
	} {
		infos, err := mount.ParseMountInfo(filepath.Join("testdata", "mountinfo", tc.table))
		if err != nil {
			t.Fatal(err)
		}
		if got := onSharedMount(tc.path, infos); got != tc.want {
			t.Errorf("%s: onSharedMount(%q) = %v, want %v", tc.table, tc.path, got, tc.want)
		}
	}
}
