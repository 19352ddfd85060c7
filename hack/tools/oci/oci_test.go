package oci

import (
	"compress/gzip"
	"os"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// The digests were recorded with the code each image builder had before they shared this
// package (hack/tools' own, hack/conformance's copy): the same inputs must keep giving the same
// images, or every node would pull them anew. DiffIDs hash the tar only; layer and image
// digests also depend on Go's gzip output, stable for a given toolchain.
func TestLayersAndImagesAreReproducible(t *testing.T) {
	for _, c := range []struct {
		name                          string
		files                         []File
		opts                          []LayerOption
		cfg                           v1.Config
		history                       v1.History
		layerDigest, diffID, imageDig string
	}{
		{
			name: "registry and vk-cri images",
			files: append(Dirs("etc", "usr"), File{Name: "tmp", Mode: 0o777 | os.ModeDir | os.ModeSticky},
				File{Name: "etc/passwd", Mode: 0o644, Data: []byte("root:x:0:0:root:/:/bin/sh\n")},
				File{Name: "bin/busybox", Mode: 0o755, Data: []byte("bb")}, File{Name: "bin/sh", Mode: 0o755, Link: "bin/busybox"}),
			cfg:         v1.Config{Entrypoint: []string{"/bin/sh"}},
			history:     History("t", "x"),
			layerDigest: "sha256:c0b6955d7d1ed9ef6003091c026094e9e137473fc969eac36bafd8b2f8d72195",
			diffID:      "sha256:7c769e8d2bf5db336e8e06acd97494567bafeb4a37b78bcd035418dd038adb43",
			imageDig:    "sha256:7f1c2726c3525c5497e2f8ead2a3ac9498589675c01969750803941b812c94ee",
		},
		{
			name: "conformance stand-ins: owners, symlinks, setuid, fastest gzip",
			files: []File{
				{Name: "bin", Mode: 0o755 | os.ModeDir},
				{Name: "bin/busybox", Mode: 0o755, Data: []byte("#!fake busybox\n")},
				{Name: "bin/sh", Mode: 0o755, Link: "bin/busybox"},
				{Name: "agnhost-2", Mode: 0o777, Symlink: "agnhost"},
				{Name: "tmp", Mode: 0o777 | os.ModeDir | os.ModeSticky},
				{Name: "home/user", Mode: 0o755 | os.ModeDir, UID: 1000, GID: 1000},
				{Name: "usr/local/bin/nnp", Mode: 0o755 | os.ModeSetuid, Data: []byte("nnp")},
				{Name: "etc/passwd", Mode: 0o644, Data: []byte("root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/home:/bin/false\n")},
			},
			opts:        []LayerOption{WithCompression(gzip.BestSpeed)},
			cfg:         v1.Config{Entrypoint: []string{"/bin/sh"}, Labels: map[string]string{"a": "b"}},
			history:     v1.History{Created: v1.Time{Time: Epoch}, CreatedBy: "x"},
			layerDigest: "sha256:67e5e92718f01c918569acc7d05823b6e7bb08176288b0794b840bfe33f942ce",
			diffID:      "sha256:80245103d35423fbe9657eee60b75ba95aa3d1f807f4c306c085e3b153607037",
			imageDig:    "sha256:345bee1d48bdc7356355cb2dbb882be9b44a8c2f7b39a615b100e448e2fbe106",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			l, err := NewLayer(c.files, c.opts...)
			if err != nil {
				t.Fatal(err)
			}
			d, err := l.Digest()
			if err != nil {
				t.Fatal(err)
			}
			di, err := l.DiffID()
			if err != nil {
				t.Fatal(err)
			}
			img, err := NewImage(c.cfg, mutate.Addendum{Layer: l, History: c.history})
			if err != nil {
				t.Fatal(err)
			}
			id, err := img.Digest()
			if err != nil {
				t.Fatal(err)
			}
			if di.String() != c.diffID {
				t.Errorf("DiffID %s, want %s", di, c.diffID)
			}
			if d.String() != c.layerDigest || id.String() != c.imageDig {
				t.Errorf("layer %s, image %s; want %s, %s", d, id, c.layerDigest, c.imageDig)
			}
		})
	}
}
