// Command image builds vk-cri's OCI image without Docker: the static vk-cri binary on a minimal
// base (no shell, no package manager: /etc/passwd and /etc/group for root, /tmp, and the
// binary), and pushes it to a registry or writes it as an OCI layout directory.
//
//	image --binary bin/vk-cri --ref 127.0.0.1:5000/vk-cri/vk-cri:v0.1.0 [--oci-layout DIR]
//
// Same binary, same digest: files, times and config are fixed.
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"os"

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
	flag.Parse()

	logger := log.New(os.Stderr, "image: ", 0)
	if err := run(*binary, *ref, *ociLayout, *version, logger); err != nil {
		logger.Fatal(err)
	}
}

func run(binary, ref, ociLayout, version string, logger *log.Logger) error {
	if ref == "" && ociLayout == "" {
		return errors.New("nothing to do: give --ref and/or --oci-layout")
	}
	img, err := build(binary, version)
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

// build makes the image: one layer with the base files and the binary.
func build(binary, version string) (v1.Image, error) {
	data, err := os.ReadFile(binary)
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
	return oci.NewImage(v1.Config{
		Entrypoint: []string{"/" + binaryPath},
		User:       "0:0",
		Labels:     labels,
	}, mutate.Addendum{Layer: layer, History: oci.History("hack/tools/image", "static vk-cri binary on a minimal base")})
}

func writeLayout(dir string, img v1.Image) error {
	p, err := layout.FromPath(dir)
	if err != nil {
		if p, err = layout.Write(dir, empty.Index); err != nil {
			return err
		}
	}
	return p.ReplaceImage(img, func(desc v1.Descriptor) bool { return true })
}
