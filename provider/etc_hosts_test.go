package provider

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteEtcHosts(t *testing.T) {
	root := t.TempDir()
	pod := testPod()
	if m, err := writeEtcHosts(root, "/nonexistent", pod, nil, ""); err != nil || m != nil {
		t.Errorf("no pod IP yet: mount %v, err %v; want neither (the runtime's file is kept)", m, err)
	}
	m, err := writeEtcHosts(root, "/nonexistent", pod, []string{"10.88.0.5"}, "")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, "pods", testPodUID, "etc-hosts")
	if m.HostPath != path || m.ContainerPath != "/etc/hosts" || m.Readonly || !m.SelinuxRelabel {
		t.Errorf("mount %+v", m)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
	nodeHosts := filepath.Join(root, "node-hosts")
	if err := os.WriteFile(nodeHosts, []byte("10.0.0.1 node\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pod.Spec.HostNetwork = true
	if _, err := writeEtcHosts(root, nodeHosts, pod, nil, ""); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if string(b) != "# Kubernetes-managed hosts file (host network).\n10.0.0.1 node\n" {
		t.Errorf("host network file %q", b)
	}
}
