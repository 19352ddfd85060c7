// Command registry builds vk-cri's test images offline and serves them from an in-memory
// OCI registry on a loopback address.
//
// Images (all linux/GOARCH, OCI media types, fixed timestamps so digests are stable for
// the same inputs):
//
//	vk-cri/busybox:1.36, vk-cri/busybox:latest  busybox-static, every applet a hard link in /bin
//	vk-cri/pause:3.10                           only /pause (the vktest binary), runs "pause"
//	vk-cri/vktest:latest                        busybox rootfs + /vktest, serves HTTP on 8080
//	vk-cri/httpd:latest                         busybox rootfs + /www/index.html, busybox httpd on 80
//
// The images are pushed into the registry in memory before it accepts connections, so
// once a request is answered every image is there. Other images may be pushed to it
// too (it keeps everything in memory until it exits).
//
//	registry --addr 127.0.0.1:5000 --vktest-bin /path/to/vktest [--busybox /bin/busybox]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"path"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/vk-cri/vk-cri/hack/tools/oci"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:5000", "loopback address to listen on")
	vktestBin := flag.String("vktest-bin", "", "path of the static vktest binary (required)")
	busyboxBin := flag.String("busybox", "/bin/busybox", "path of a static busybox binary")
	logRequests := flag.Bool("log-requests", true, "log every registry request")
	flag.Parse()

	logger := log.New(os.Stderr, "registry: ", log.LstdFlags)
	if err := run(*addr, *vktestBin, *busyboxBin, *logRequests, logger); err != nil {
		logger.Fatal(err)
	}
}

func run(addr, vktestBin, busyboxBin string, logRequests bool, logger *log.Logger) error {
	if vktestBin == "" {
		return errors.New("--vktest-bin is required")
	}
	if err := checkLoopback(addr); err != nil {
		return err
	}
	// Listen first: a port in use fails fast, and clients that connect while the images
	// are being built wait in the backlog instead of seeing an empty registry.
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	logger.Printf("listening on %s, building images", ln.Addr())

	start := time.Now()
	images, err := buildImages(busyboxBin, vktestBin)
	if err != nil {
		return fmt.Errorf("building images: %w", err)
	}

	// The registry logs every request; keep its own pushes out of the log.
	reqLog := log.New(io.Discard, "registry: ", log.LstdFlags)
	handler := registry.New(registry.Logger(reqLog))
	if err := pushAll(handler, ln.Addr().String(), images, logger); err != nil {
		return fmt.Errorf("pushing images: %w", err)
	}
	if logRequests {
		reqLog.SetOutput(os.Stderr)
	}
	logger.Printf("built and pushed %d tags in %s", len(images), time.Since(start).Round(time.Millisecond))

	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 30 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	logger.Printf("ready on http://%s", ln.Addr())

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Printf("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(shutdownCtx)
}

// checkLoopback refuses any listen address that is not on a loopback interface.
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("invalid --addr %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("--addr %q: only loopback addresses are allowed", addr)
	}
	return nil
}

// taggedImage is an image and the repository:tag it is pushed as (without registry).
type taggedImage struct {
	ref string
	img v1.Image
}

// ---- pushing through the handler, in memory ----

// handlerTransport sends requests straight to an http.Handler, without a network.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body == nil {
		req.Body = http.NoBody
	}
	req.RequestURI = req.URL.RequestURI()
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, req)
	resp := rec.Result()
	resp.Request = req
	return resp, nil
}

func pushAll(h http.Handler, host string, images []taggedImage, logger *log.Logger) error {
	opts := []remote.Option{
		remote.WithTransport(handlerTransport{h}),
		remote.WithAuth(authn.Anonymous),
	}
	for _, ti := range images {
		ref, err := name.ParseReference(host+"/"+ti.ref, name.Insecure, name.StrictValidation)
		if err != nil {
			return err
		}
		if err := remote.Write(ref, ti.img, opts...); err != nil {
			return fmt.Errorf("%s: %w", ref, err)
		}
		digest, err := ti.img.Digest()
		if err != nil {
			return err
		}
		logger.Printf("pushed %s@%s", ref, digest)
	}
	return nil
}

// ---- images ----

func buildImages(busyboxBin, vktestBin string) ([]taggedImage, error) {
	busybox, err := os.ReadFile(busyboxBin)
	if err != nil {
		return nil, err
	}
	applets, err := oci.BusyboxApplets(busyboxBin)
	if err != nil {
		return nil, err
	}
	vktest, err := os.ReadFile(vktestBin)
	if err != nil {
		return nil, err
	}

	rootfs, err := oci.NewLayer(busyboxRootfs(busybox, applets))
	if err != nil {
		return nil, err
	}
	rootfsAdd := mutate.Addendum{Layer: rootfs, History: history("busybox-static rootfs, applets hard-linked in /bin")}

	busyboxImg, err := oci.NewImage(v1.Config{Cmd: []string{"sh"}}, rootfsAdd)
	if err != nil {
		return nil, err
	}

	pauseLayer, err := oci.NewLayer([]oci.File{{Name: "pause", Mode: 0o755, Data: vktest}})
	if err != nil {
		return nil, err
	}
	pauseImg, err := oci.NewImage(v1.Config{Entrypoint: []string{"/pause", "pause"}},
		mutate.Addendum{Layer: pauseLayer, History: history("vktest as /pause")})
	if err != nil {
		return nil, err
	}

	vktestLayer, err := oci.NewLayer([]oci.File{{Name: "vktest", Mode: 0o755, Data: vktest}})
	if err != nil {
		return nil, err
	}
	vktestImg, err := oci.NewImage(v1.Config{
		Entrypoint:   []string{"/vktest"},
		Cmd:          []string{"serve", "--port", "8080"},
		ExposedPorts: map[string]struct{}{"8080/tcp": {}},
	}, rootfsAdd, mutate.Addendum{Layer: vktestLayer, History: history("vktest as /vktest")})
	if err != nil {
		return nil, err
	}

	wwwLayer, err := oci.NewLayer([]oci.File{
		{Name: "www", Mode: 0o755 | os.ModeDir},
		{Name: "www/index.html", Mode: 0o644, Data: []byte("vk-cri httpd\n")},
	})
	if err != nil {
		return nil, err
	}
	httpdImg, err := oci.NewImage(v1.Config{
		Cmd:          []string{"httpd", "-f", "-p", "80", "-h", "/www"},
		ExposedPorts: map[string]struct{}{"80/tcp": {}},
	}, rootfsAdd, mutate.Addendum{Layer: wwwLayer, History: history("/www/index.html")})
	if err != nil {
		return nil, err
	}

	// busybox:latest last: a client that sees it knows everything is there.
	return []taggedImage{
		{"vk-cri/pause:3.10", pauseImg},
		{"vk-cri/vktest:latest", vktestImg},
		{"vk-cri/httpd:latest", httpdImg},
		{"vk-cri/busybox:1.36", busyboxImg},
		{"vk-cri/busybox:latest", busyboxImg},
	}, nil
}

func history(createdBy string) v1.History { return oci.History("hack/tools/registry", createdBy) }

const (
	passwd = "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/home:/bin/false\n"
	group  = "root:x:0:\nnobody:x:65534:\n"
)

func busyboxRootfs(busybox []byte, applets []string) []oci.File {
	files := []oci.File{}
	for _, d := range []string{"bin", "dev", "etc", "home", "proc", "sys", "usr", "usr/bin", "usr/sbin", "sbin", "var", "var/log", "var/run"} {
		files = append(files, oci.File{Name: d, Mode: 0o755 | os.ModeDir})
	}
	files = append(files,
		oci.File{Name: "root", Mode: 0o700 | os.ModeDir},
		oci.File{Name: "tmp", Mode: 0o777 | os.ModeDir | os.ModeSticky},
		oci.File{Name: "var/tmp", Mode: 0o777 | os.ModeDir | os.ModeSticky},
		oci.File{Name: "etc/passwd", Mode: 0o644, Data: []byte(passwd)},
		oci.File{Name: "etc/group", Mode: 0o644, Data: []byte(group)},
		oci.File{Name: "bin/busybox", Mode: 0o755, Data: busybox},
	)
	for _, a := range applets {
		files = append(files, oci.File{Name: path.Join("bin", a), Mode: 0o755, Link: "bin/busybox"})
	}
	return files
}
