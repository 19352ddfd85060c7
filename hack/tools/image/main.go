// Command image builds vk-cri's OCI images without Docker and pushes them to a registry or
// writes them as OCI layout directories.
//
//	image --binary bin/vk-cri --ref 127.0.0.1:5000/vk-cri/vk-cri:v0.1.0 [--oci-layout DIR]
//
// makes the minimal image: the static vk-cri binary on a base with no shell and no package
// manager (/etc/passwd and /etc/group for root, /tmp, and the binary).
//
//	image --binary bin/vk-cri --ref .../vk-cri-runtime:TAG --busybox /bin/busybox \
//	      --add /path/to/containerd=usr/local/bin/containerd --add ...
//
// makes the runtime bundle the chart runs by default: the same base and binary, busybox-static
// with its applets hard-linked in /bin (the chart's entrypoint script is a shell script), and
// every --add HOST=IMAGE file (containerd, its shim, runc, crictl, the CNI plugins and the
// shared libraries they load).
//
// Same inputs, same digest: files, times and config are fixed.
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"path"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/vk-cri/vk-cri/hack/tools/oci"
)

const binaryPath = "usr/local/bin/vk-cri"

func main() {
	binary := flag.String("binary", "bin/vk-cri", "static vk-cri binary")
	ref := flag.String("ref", "", "repository:tag to push to (plain HTTP for loopback registries)")
	ociLayout := flag.String("oci-layout", "", "also write the image into this OCI layout directory")
	version := flag.String("version", "", "vk-cri version, recorded as the image's version label")
	busybox := flag.String("busybox", "", "static busybox binary: makes the runtime bundle (a shell and its applets in /bin)")
	var adds addFlags
	flag.Var(&adds, "add", "HOST=IMAGE: one more file of the runtime bundle (repeatable; IMAGE relative to /)")
	flag.Parse()

	logger := log.New(os.Stderr, "image: ", 0)
	if err := run(bundle{binary: *binary, busybox: *busybox, adds: adds}, *ref, *ociLayout, *version, logger); err != nil {
		logger.Fatal(err)
	}
}

// addFlags collects --add HOST=IMAGE.
type addFlags []addFile

type addFile struct{ host, image string }

func (a *addFlags) String() string { return fmt.Sprint(*a) }

func (a *addFlags) Set(v string) error {
	host, image, ok := strings.Cut(v, "=")
	image = strings.TrimPrefix(image, "/")
	if !ok || host == "" || image == "" {
		return fmt.Errorf("--add %q: want HOST=IMAGE", v)
	}
	*a = append(*a, addFile{host: host, image: image})
	return nil
}

// bundle is what goes into the image: vk-cri, and for the runtime bundle busybox and more files.
type bundle struct {
	binary  string
	busybox string
	adds    []addFile
}

func run(b bundle, ref, ociLayout, version string, logger *log.Logger) error {
	if ref == "" && ociLayout == "" {
		return errors.New("nothing to do: give --ref and/or --oci-layout")
	}
	if len(b.adds) > 0 && b.busybox == "" {
		return errors.New("--add makes the runtime bundle: give --busybox too")
	}
	img, err := build(b, version)
	if err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	if ociLayout != "" {
		if err := writeLayout(ociLayout, img); err != nil {
			return fmt.Errorf("writing OCI layout %s: %w", ociLayout, err)
		}
		logger.Printf("wrote %s@%s", ociLayout, digest)
	}
	if ref != "" {
		r, err := name.ParseReference(ref, name.Insecure, name.StrictValidation)
		if err != nil {
			return fmt.Errorf("--ref: %w", err)
		}
		if err := remote.Write(r, img, remote.WithAuth(authn.Anonymous)); err != nil {
			return fmt.Errorf("pushing %s: %w", r, err)
		}
		logger.Printf("pushed %s@%s", r, digest)
	}
	fmt.Println(digest)
	return nil
}

// build makes the image: one layer with the base files and the binary, and for the runtime
// bundle a second one with busybox and the added files.
func build(b bundle, version string) (v1.Image, error) {
	data, err := os.ReadFile(b.binary)
	if err != nil {
		return nil, err
	}
	files := oci.Dirs("etc", "usr", "usr/local", "usr/local/bin", "var", "var/lib", "var/log")
	files = append(files,
		oci.File{Name: "tmp", Mode: 0o777 | os.ModeDir | os.ModeSticky},
		oci.File{Name: "etc/passwd", Mode: 0o644, Data: []byte("root:x:0:0:root:/:/usr/local/bin/vk-cri\n")},
		oci.File{Name: "etc/group", Mode: 0o644, Data: []byte("root:x:0:\n")},
		oci.File{Name: binaryPath, Mode: 0o755, Data: data},
	)
	layer, err := oci.NewLayer(files)
	if err != nil {
		return nil, err
	}
	labels := map[string]string{
		"org.opencontainers.image.title":  "vk-cri",
		"org.opencontainers.image.source": "https://github.com/vk-cri/vk-cri",
	}
	if version != "" {
		labels["org.opencontainers.image.version"] = version
	}
	layers := []mutate.Addendum{{Layer: layer, History: oci.History("hack/tools/image", "static vk-cri binary on a minimal base")}}
	if b.busybox != "" {
		runtimeLayer, err := bundleLayer(b)
		if err != nil {
			return nil, err
		}
		labels["org.opencontainers.image.title"] = "vk-cri-runtime"
		layers = append(layers, mutate.Addendum{Layer: runtimeLayer,
			History: oci.History("hack/tools/image", "runtime bundle: busybox-static, containerd, runc, CNI plugins")})
	}
	return oci.NewImage(v1.Config{
		Entrypoint: []string{"/" + binaryPath},
		User:       "0:0",
		Labels:     labels,
	}, layers...)
}

// bundleLayer holds busybox (applets hard-linked in /bin) and the added files, each with the
// directories above it; added files keep their host mode.
func bundleLayer(b bundle) (v1.Layer, error) {
	bb, err := os.ReadFile(b.busybox)
	if err != nil {
		return nil, err
	}
	applets, err := oci.BusyboxApplets(b.busybox)
	if err != nil {
		return nil, err
	}
	dirs := map[string]bool{"bin": true}
	files := []oci.File{{Name: "bin", Mode: 0o755 | os.ModeDir}, {Name: "bin/busybox", Mode: 0o755, Data: bb}}
	for _, a := range applets {
		files = append(files, oci.File{Name: "bin/" + a, Mode: 0o755, Link: "bin/busybox"})
	}
	for _, a := range b.adds {
		fi, err := os.Stat(a.host)
		if err != nil {
			return nil, err
		}
		data, err := os.ReadFile(a.host)
		if err != nil {
			return nil, err
		}
		var parents []string
		for d := path.Dir(a.image); d != "." && !dirs[d] && !baseDirs[d]; d = path.Dir(d) {
			parents = append(parents, d)
			dirs[d] = true
		}
		for i := len(parents) - 1; i >= 0; i-- {
			files = append(files, oci.File{Name: parents[i], Mode: 0o755 | os.ModeDir})
		}
		files = append(files, oci.File{Name: a.image, Mode: fi.Mode().Perm(), Data: data})
	}
	return oci.NewLayer(files)
}

// baseDirs are the directories the first layer has already.
var baseDirs = map[string]bool{"etc": true, "usr": true, "usr/local": true, "usr/local/bin": true, "var": true, "var/lib": true, "var/log": true}

func writeLayout(dir string, img v1.Image) error {
	p, err := layout.FromPath(dir)
	if err != nil {
		if p, err = layout.Write(dir, empty.Index); err != nil {
			return err
		}
	}
	return p.ReplaceImage(img, func(desc v1.Descriptor) bool { return true })
}
