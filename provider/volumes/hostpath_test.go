package volumes

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestCheckHostPathType(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()

	typ := func(t v1.HostPathType) *v1.HostPathType { return &t }
	cases := []struct {
		name, path string
		typ        *v1.HostPathType
		wantErr    string
	}{
		{"unset", "/nonexistent/x", nil, ""},
		{"empty type", "/nonexistent/x", typ(v1.HostPathUnset), ""},
		{"directory", dir, typ(v1.HostPathDirectory), ""},
		{"directory is a file", file, typ(v1.HostPathDirectory), "hostPath type check failed: " + file + " is not a directory, it's a File"},
		{"directory missing", filepath.Join(dir, "none"), typ(v1.HostPathDirectory), "is not a directory, unable to determine its type"},
		{"file", file, typ(v1.HostPathFile), ""},
		{"file is a directory", dir, typ(v1.HostPathFile), "is not a file, it's a Directory"},
		{"socket", sock, typ(v1.HostPathSocket), ""},
		{"socket is a file", file, typ(v1.HostPathSocket), "is not a socket file, it's a File"},
		{"char device", "/dev/null", typ(v1.HostPathCharDev), ""},
		{"char device is a dir", dir, typ(v1.HostPathCharDev), "is not a character device, it's a Directory"},
		{"block device is a char device", "/dev/null", typ(v1.HostPathBlockDev), "is not a block device, it's a CharDevice"},
		{"directory or create: exists as file", file, typ(v1.HostPathDirectoryOrCreate), "is not a directory"},
		{"file or create: exists as dir", dir, typ(v1.HostPathFileOrCreate), "is not a file"},
		{"invalid", dir, typ("Weird"), "Weird is an invalid volume type"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := checkHostPathType(c.path, c.typ)
			switch {
			case c.wantErr == "" && err != nil:
				t.Errorf("unexpected error %v", err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Errorf("error %v, want it to contain %q", err, c.wantErr)
			}
		})
	}

	created := filepath.Join(dir, "made/by/type")
	if err := checkHostPathType(created, typ(v1.HostPathDirectoryOrCreate)); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(created); err != nil || !fi.IsDir() {
		t.Errorf("DirectoryOrCreate: %v %v", fi, err)
	}
	newFile := filepath.Join(dir, "new-file")
	if err := checkHostPathType(newFile, typ(v1.HostPathFileOrCreate)); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(newFile); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("FileOrCreate: %v %v", fi, err)
	}
}

func TestForbiddenHostPath(t *testing.T) {
	m := New(t.TempDir(), WithForbidHostPath(true))
	if _, err := m.setUpHostPath(&v1.HostPathVolumeSource{Path: "/tmp"}); !errors.Is(err, ErrHostPathForbidden) {
		t.Errorf("hostPath on a node that forbids it: %v", err)
	}
}
