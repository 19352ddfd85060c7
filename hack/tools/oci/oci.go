// Package oci assembles reproducible OCI images from in-memory files: fixed owners, modes and
// time stamps, so the same inputs always give the same digests. Shared by the registry's test
// images, vk-cri's own image and the conformance stand-ins (hack/conformance, a module of its
// own that uses this one through a replace directive).
package oci

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"runtime"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Epoch is the fixed time stamped on every file, history entry and config.
var Epoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// DefaultPath is the PATH every image gets.
const DefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// File is one entry of a layer: a directory (Mode has os.ModeDir), a hard link to the path Link,
// a symbolic link to Symlink, or else a regular file holding Data. Owners are root unless UID
// or GID say otherwise; the sticky and setuid bits of Mode are kept.
type File struct {
	Name     string
	Mode     os.FileMode
	Data     []byte
	Link     string
	Symlink  string
	UID, GID int
}

// Dirs lists directories with mode 0755, one File each.
func Dirs(names ...string) []File {
	files := make([]File, 0, len(names))
	for _, n := range names {
		files = append(files, File{Name: n, Mode: 0o755 | os.ModeDir})
	}
	return files
}

// History is the history entry of a layer made by tool.
func History(tool, createdBy string) v1.History {
	return v1.History{Created: v1.Time{Time: Epoch}, CreatedBy: createdBy, Comment: "built by vk-cri " + tool}
}

// NewImage makes an OCI image for linux/GOARCH from cfg (PATH is added to its Env) and layers.
func NewImage(cfg v1.Config, layers ...mutate.Addendum) (v1.Image, error) {
	cfg.Env = append([]string{"PATH=" + DefaultPath}, cfg.Env...)
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err := mutate.ConfigFile(img, &v1.ConfigFile{
		Architecture: runtime.GOARCH,
		OS:           "linux",
		Created:      v1.Time{Time: Epoch},
		Config:       cfg,
		RootFS:       v1.RootFS{Type: "layers"},
	})
	if err != nil {
		return nil, err
	}
	for i := range layers {
		layers[i].MediaType = types.OCILayer
	}
	return mutate.Append(img, layers...)
}

// LayerOption tunes NewLayer.
type LayerOption func(*layerOptions)

type layerOptions struct{ level int }

// WithCompression sets the gzip level (gzip.DefaultCompression unless given): big layers of
// binaries build much faster with gzip.BestSpeed. It changes the layer's digest, not its DiffID.
func WithCompression(level int) LayerOption { return func(o *layerOptions) { o.level = level } }

// NewLayer writes files into a gzipped tar with fixed times (and owners, root unless a File
// says otherwise) and returns it as an OCI layer. Go's gzip output is deterministic, so the
// digest only depends on the files and the compression level.
func NewLayer(files []File, opts ...LayerOption) (v1.Layer, error) {
	o := layerOptions{level: gzip.DefaultCompression}
	for _, opt := range opts {
		opt(&o)
	}
	var tarBuf bytes.Buffer
	tw := tar.NewWriter(&tarBuf)
	for _, f := range files {
		hdr := &tar.Header{
			Name:    f.Name,
			Mode:    int64(f.Mode.Perm()),
			ModTime: Epoch,
			Uid:     f.UID,
			Gid:     f.GID,
			Format:  tar.FormatPAX,
		}
		if f.UID == 0 {
			hdr.Uname = "root"
		}
		if f.GID == 0 {
			hdr.Gname = "root"
		}
		if f.Mode&os.ModeSticky != 0 {
			hdr.Mode |= 0o1000
		}
		if f.Mode&os.ModeSetuid != 0 {
			hdr.Mode |= 0o4000
		}
		switch {
		case f.Mode.IsDir():
			hdr.Typeflag = tar.TypeDir
			hdr.Name += "/"
		case f.Link != "":
			hdr.Typeflag = tar.TypeLink
			hdr.Linkname = f.Link
		case f.Symlink != "":
			hdr.Typeflag = tar.TypeSymlink
			hdr.Linkname = f.Symlink
		default:
			hdr.Typeflag = tar.TypeReg
			hdr.Size = int64(len(f.Data))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if hdr.Typeflag == tar.TypeReg {
			if _, err := tw.Write(f.Data); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}

	var gzBuf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gzBuf, o.level)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(tarBuf.Bytes()); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	gz := gzBuf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(gz)), nil
	}, tarball.WithMediaType(types.OCILayer))
}
