package main

// The offline stand-ins of the e2e test images (see ../README.md for how each differs from the
// real image). They are built in memory from local files, with fixed timestamps, so the same
// inputs always give the same digests, and pushed to the local registry under the repository
// paths of the real images (registry.k8s.io/e2e-test-images/agnhost:2.66.1 is served as
// 127.0.0.1:5000/e2e-test-images/agnhost:2.66.1).

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/vk-cri/vk-cri/hack/tools/oci"
)

type hostBins []string

func (h *hostBins) String() string     { return strings.Join(*h, ",") }
func (h *hostBins) Set(v string) error { *h = append(*h, v); return nil }

type imageInputs struct {
	busybox, bash, agnhost, nnp, pause string
	kittenDir, nautilusDir, porterDir  string
	hostBins                           []string // DEST=SRC: a dynamically linked host binary and its libraries
}

func cmdImages(args []string) error {
	fs := flag.NewFlagSet("images", flag.ExitOnError)
	reg := fs.String("registry", "127.0.0.1:5000", "loopback registry to push to")
	list := fs.Bool("list", false, "only print the image references (repository:tag), do not build")
	var in imageInputs
	var hb hostBins
	fs.StringVar(&in.busybox, "busybox", "/bin/busybox", "static busybox (its ash should keep environment variables whose names are not identifiers and look commands up on PATH: hack/conformance.sh rebuilds Debian's that way)")
	fs.StringVar(&in.bash, "bash", "", "static bash (Debian's bash-static)")
	fs.StringVar(&in.agnhost, "agnhost", "", "static agnhost")
	fs.StringVar(&in.nnp, "nnp", "", "static nonewprivs test binary (k8s.io/kubernetes/test/images/nonewprivs)")
	fs.StringVar(&in.pause, "pause", "", "static pause binary (hack/conformance/pause)")
	fs.StringVar(&in.kittenDir, "kitten-html", "", "directory with kitten.jpg and data.json")
	fs.StringVar(&in.nautilusDir, "nautilus-html", "", "directory with nautilus.jpg and data.json")
	fs.StringVar(&in.porterDir, "porter-dir", "", "directory with agnhost's localhost.crt and localhost.key (test/images/agnhost/porter)")
	fs.Var(&hb, "host-bin", "DEST=SRC: copy the host binary SRC to DEST in the agnhost image, with the shared libraries ldd lists (repeatable)")
	_ = fs.Parse(args)
	in.hostBins = hb

	if *list {
		for _, s := range standIns {
			fmt.Println(s.ref)
		}
		return nil
	}
	for n, v := range map[string]string{"--bash": in.bash, "--agnhost": in.agnhost, "--nnp": in.nnp, "--pause": in.pause, "--kitten-html": in.kittenDir, "--nautilus-html": in.nautilusDir, "--porter-dir": in.porterDir} {
		if v == "" {
			return fmt.Errorf("%s is required", n)
		}
	}
	if err := checkLoopback(*reg); err != nil {
		return err
	}
	start := time.Now()
	images, err := buildStandIns(in)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "built %d stand-in images in %s\n", len(images), time.Since(start).Round(time.Millisecond))
	opts := []remote.Option{remote.WithAuth(authn.Anonymous)}
	for _, ti := range images {
		ref, err := name.ParseReference(*reg+"/"+ti.ref, name.Insecure, name.StrictValidation)
		if err != nil {
			return err
		}
		digest, err := ti.img.Digest()
		if err != nil {
			return err
		}
		// Already there with the same content: nothing to push.
		if d, err := remote.Head(ref, opts...); err == nil && d.Digest == digest {
			fmt.Printf("%s %s\n", ti.ref, digest)
			continue
		}
		if err := remote.Write(ref, ti.img, opts...); err != nil {
			return fmt.Errorf("pushing %s: %w", ref, err)
		}
		fmt.Fprintf(os.Stderr, "pushed %s@%s\n", ref, digest)
		fmt.Printf("%s %s\n", ti.ref, digest)
	}
	return nil
}

func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("invalid --registry %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("--registry %q: only loopback registries", addr)
	}
	return nil
}

type taggedImage struct {
	ref string
	img v1.Image
}

// standIn describes one image: its repository:tag (relative to the registry) and how to build it.
type standIn struct {
	ref    string
	layers []string // names of layers, in order (see buildStandIns)
	cfg    v1.Config
}

var agnhostPorts = map[string]struct{}{"80/tcp": {}, "8080/tcp": {}, "8081/tcp": {}, "9376/tcp": {}, "5000/tcp": {}}

var standIns = []standIn{
	{ref: "e2e-test-images/busybox:1.37.0-2", layers: []string{"busybox"},
		cfg: v1.Config{Cmd: []string{"sh"}}},
	{ref: "e2e-test-images/agnhost:2.66.1", layers: []string{"busybox", "bash", "nettools", "agnhost"},
		cfg: v1.Config{Entrypoint: []string{"/agnhost"}, Cmd: []string{"pause"}, ExposedPorts: agnhostPorts}},
	{ref: "e2e-test-images/agnhost:2.55", layers: []string{"busybox", "bash", "nettools", "agnhost"},
		cfg: v1.Config{Entrypoint: []string{"/agnhost"}, Cmd: []string{"pause"}, ExposedPorts: agnhostPorts}},
	{ref: "e2e-test-images/kitten:1.8", layers: []string{"busybox", "bash", "nettools", "agnhost", "kitten"},
		cfg: v1.Config{Entrypoint: []string{"/agnhost"}, Cmd: []string{"test-webserver"}, ExposedPorts: agnhostPorts}},
	{ref: "e2e-test-images/nautilus:1.8", layers: []string{"busybox", "bash", "nettools", "agnhost", "nautilus"},
		cfg: v1.Config{Entrypoint: []string{"/agnhost"}, Cmd: []string{"test-webserver"}, ExposedPorts: agnhostPorts}},
	{ref: "e2e-test-images/nginx:1.27.0-2", layers: []string{"busybox", "nginx"},
		cfg: v1.Config{Cmd: []string{"httpd", "-f", "-p", "80", "-h", "/usr/share/nginx/html"}, ExposedPorts: map[string]struct{}{"80/tcp": {}}}},
	{ref: "e2e-test-images/nginx:1.28.0-2", layers: []string{"busybox", "nginx"},
		cfg: v1.Config{Cmd: []string{"httpd", "-f", "-p", "80", "-h", "/usr/share/nginx/html"}, ExposedPorts: map[string]struct{}{"80/tcp": {}}}},
	{ref: "e2e-test-images/nonroot:1.5", layers: []string{"busybox"},
		cfg: v1.Config{Cmd: []string{"sh"}, User: "1234"}},
	{ref: "e2e-test-images/nonewprivs:1.4", layers: []string{"busybox", "nnp"},
		cfg: v1.Config{Cmd: []string{"nnp"}}},
	{ref: "e2e-test-images/glibc-dns-testing:2.1.1", layers: []string{"busybox"},
		cfg: v1.Config{Cmd: []string{"sh"}}},
	{ref: "e2e-test-images/ipc-utils:1.4", layers: []string{"busybox"},
		cfg: v1.Config{Cmd: []string{"sh"}}},
	{ref: "pause:3.10.2", layers: []string{"pause"},
		cfg: v1.Config{Entrypoint: []string{"/pause"}, User: "65535:65535"}},
}

func buildStandIns(in imageInputs) ([]taggedImage, error) {
	read := func(p string) []byte {
		if p == "" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			panic(err)
		}
		return b
	}
	var out []taggedImage
	err := func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				if e, ok := r.(error); ok {
					err = e
					return
				}
				panic(r)
			}
		}()
		applets, err := oci.BusyboxApplets(in.busybox)
		if err != nil {
			return err
		}
		nettools, err := hostBinaryFiles(in.hostBins)
		if err != nil {
			return err
		}
		html := func(dir, jpg string) []oci.File {
			return []oci.File{
				{Name: jpg, Mode: 0o644, Data: read(filepath.Join(dir, jpg))},
				{Name: "data.json", Mode: 0o644, Data: read(filepath.Join(dir, "data.json"))},
			}
		}
		layerFiles := map[string][]oci.File{
			"busybox": busyboxRootfs(read(in.busybox), applets),
			// bash: the agnhost image has it (its /bin/sh is busybox's ash, as in Alpine).
			"bash": {
				{Name: "bin", Mode: 0o755 | os.ModeDir},
				{Name: "bin/bash", Mode: 0o755, Data: read(in.bash)},
			},
			"nettools": nettools,
			"agnhost": append([]oci.File{
				{Name: "agnhost", Mode: 0o755, Data: read(in.agnhost)},
				{Name: "agnhost-2", Mode: 0o777, Symlink: "agnhost"},
				{Name: "uploads", Mode: 0o755 | os.ModeDir},
				// The TLS pair of the real image (porter's), used by netexec --tls-cert-file.
				{Name: "localhost.crt", Mode: 0o644, Data: read(filepath.Join(in.porterDir, "localhost.crt"))},
				{Name: "localhost.key", Mode: 0o644, Data: read(filepath.Join(in.porterDir, "localhost.key"))},
				{Name: "etc", Mode: 0o755 | os.ModeDir},
				{Name: "home/user-defined-in-image", Mode: 0o755 | os.ModeDir, UID: 1000, GID: 1000},
			}, etcFiles(
				"user-defined-in-image:x:1000:1000::/home/user-defined-in-image:/bin/sh\n",
				"user-defined-in-image:x:1000:\ngroup-defined-in-image:x:50000:user-defined-in-image\n")...),
			"kitten":   html(in.kittenDir, "kitten.jpg"),
			"nautilus": html(in.nautilusDir, "nautilus.jpg"),
			"nginx": {
				{Name: "usr/share/nginx/html", Mode: 0o755 | os.ModeDir},
				{Name: "usr/share/nginx/html/index.html", Mode: 0o644, Data: []byte(nginxIndex)},
			},
			"nnp": {
				{Name: "usr/local/bin", Mode: 0o755 | os.ModeDir},
				{Name: "usr/local/bin/nnp", Mode: 0o755 | os.ModeSetuid, Data: read(in.nnp)},
			},
			"pause": {{Name: "pause", Mode: 0o755, Data: read(in.pause)}},
		}
		layers := map[string]v1.Layer{}
		for n, files := range layerFiles {
			l, err := oci.NewLayer(files, oci.WithCompression(gzip.BestSpeed))
			if err != nil {
				return fmt.Errorf("layer %s: %w", n, err)
			}
			layers[n] = l
		}
		for _, s := range standIns {
			var adds []mutate.Addendum
			for _, ln := range s.layers {
				adds = append(adds, mutate.Addendum{Layer: layers[ln], MediaType: types.OCILayer, History: v1.History{
					Created: v1.Time{Time: oci.Epoch}, CreatedBy: "vk-cri conformance stand-in layer " + ln,
				}})
			}
			cfg := s.cfg
			// Every tag is its own image (own config digest), as the real ones are.
			cfg.Labels = map[string]string{"org.vk-cri.conformance.stand-in": s.ref}
			img, err := oci.NewImage(cfg, adds...)
			if err != nil {
				return fmt.Errorf("%s: %w", s.ref, err)
			}
			out = append(out, taggedImage{s.ref, img})
		}
		return nil
	}()
	return out, err
}

const nginxIndex = `<!DOCTYPE html>
<html>
<head><title>Welcome to nginx!</title></head>
<body><h1>Welcome to nginx!</h1>
<p>vk-cri conformance stand-in: busybox httpd serving this page on port 80.</p>
</body>
</html>
`

func etcFiles(extraPasswd, extraGroup string) []oci.File {
	return []oci.File{
		{Name: "etc/passwd", Mode: 0o644, Data: []byte(basePasswd + extraPasswd)},
		{Name: "etc/group", Mode: 0o644, Data: []byte(baseGroup + extraGroup)},
	}
}

const (
	basePasswd = "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/home:/bin/false\n"
	baseGroup  = "root:x:0:\nnobody:x:65534:\n"
)

func busyboxRootfs(busybox []byte, applets []string) []oci.File {
	files := []oci.File{}
	for _, d := range []string{"bin", "dev", "etc", "home", "proc", "sys", "usr", "usr/bin", "usr/sbin", "usr/local", "usr/local/bin", "sbin", "var", "var/log", "var/run"} {
		files = append(files, oci.File{Name: d, Mode: 0o755 | os.ModeDir})
	}
	files = append(files,
		oci.File{Name: "root", Mode: 0o700 | os.ModeDir},
		oci.File{Name: "tmp", Mode: 0o777 | os.ModeDir | os.ModeSticky},
		oci.File{Name: "var/tmp", Mode: 0o777 | os.ModeDir | os.ModeSticky},
		oci.File{Name: "bin/busybox", Mode: 0o755, Data: busybox},
	)
	files = append(files, etcFiles("", "")...)
	for _, a := range applets {
		files = append(files, oci.File{Name: path.Join("bin", a), Mode: 0o755, Link: "bin/busybox"})
	}
	return files
}

// hostBinaryFiles copies host binaries (DEST=SRC) and the shared libraries ldd resolves for
// them, at the paths ldd prints (symlinks resolved to their content).
func hostBinaryFiles(specs []string) ([]oci.File, error) {
	var files []oci.File
	seen := map[string]bool{}
	dirs := map[string]bool{}
	addDirs := func(p string) {
		for d := path.Dir(p); d != "." && d != "/" && d != ""; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	add := func(dest, src string, mode os.FileMode) error {
		dest = strings.TrimPrefix(path.Clean(dest), "/")
		if seen[dest] {
			return nil
		}
		data, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		seen[dest] = true
		addDirs(dest)
		files = append(files, oci.File{Name: dest, Mode: mode, Data: data})
		return nil
	}
	for _, spec := range specs {
		dest, src, ok := strings.Cut(spec, "=")
		if !ok || dest == "" || src == "" {
			return nil, fmt.Errorf("--host-bin %q: want DEST=SRC", spec)
		}
		if err := add(dest, src, 0o755); err != nil {
			return nil, err
		}
		libs, err := lddLibs(src)
		if err != nil {
			return nil, err
		}
		for _, l := range libs {
			if err := add(l, l, 0o755); err != nil {
				return nil, err
			}
		}
	}
	var out []oci.File
	var ds []string
	for d := range dirs {
		ds = append(ds, d)
	}
	sort.Strings(ds) // parents first
	for _, d := range ds {
		out = append(out, oci.File{Name: d, Mode: 0o755 | os.ModeDir})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	return append(out, files...), nil
}

var lddLine = regexp.MustCompile(`^\s*(?:\S+\s+=>\s+)?(/\S+)\s+\(0x[0-9a-f]+\)$`)

func lddLibs(bin string) ([]string, error) {
	out, err := exec.Command("ldd", bin).CombinedOutput()
	if err != nil {
		if bytes.Contains(out, []byte("not a dynamic executable")) {
			return nil, nil
		}
		return nil, fmt.Errorf("ldd %s: %v: %s", bin, err, out)
	}
	var libs []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if strings.Contains(sc.Text(), "not found") {
			return nil, fmt.Errorf("ldd %s: %s", bin, sc.Text())
		}
		if m := lddLine.FindStringSubmatch(sc.Text()); m != nil {
			libs = append(libs, m[1])
		}
	}
	if len(libs) == 0 {
		return nil, errors.New("ldd " + bin + " listed no libraries")
	}
	return libs, nil
}
