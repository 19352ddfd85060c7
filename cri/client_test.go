package cri

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestConnectNamesTheEndpointWhenTheSocketIsMissing(t *testing.T) {
	endpoint := "unix://" + filepath.Join(t.TempDir(), "absent.sock")
	_, err := Connect(context.Background(), endpoint, time.Second)
	if err == nil || !strings.Contains(err.Error(), endpoint) || !strings.Contains(err.Error(), "is not there") {
		t.Fatalf("error %v should name %s and say the socket is missing", err, endpoint)
	}
}

func TestConnectRejectsAFileThatIsNotASocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plain")
	if err := os.WriteFile(path, []byte("not a socket"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Connect(context.Background(), "unix://"+path, time.Second)
	if err == nil || !strings.Contains(err.Error(), "not a unix socket") {
		t.Fatalf("error %v, want 'not a unix socket'", err)
	}
}

// A gRPC server that serves no CRI service stands for a socket that does not speak CRI v1.
func TestConnectRejectsASocketThatDoesNotSpeakCRIv1(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "other.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	go func() { _ = srv.Serve(l) }()
	defer srv.Stop()

	endpoint := "unix://" + sock
	_, err = Connect(context.Background(), endpoint, 2*time.Second)
	if err == nil || !strings.Contains(err.Error(), endpoint) || !strings.Contains(err.Error(), "CRI v1") {
		t.Fatalf("error %v should name %s and CRI v1", err, endpoint)
	}
}

func TestRuntimeVersionStringIsNameAndVersion(t *testing.T) {
	got := RuntimeVersionString(&runtimeapi.VersionResponse{RuntimeName: "containerd", RuntimeVersion: "1.6.20~ds1"})
	if got != "containerd://1.6.20" {
		t.Fatalf("got %q", got)
	}
	if RuntimeVersionString(nil) != "" {
		t.Fatal("nil version should give an empty string")
	}
}
