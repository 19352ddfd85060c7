package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestParseReserved(t *testing.T) {
	got, err := parseReserved("kube-reserved", map[string]string{"cpu": "0.1234", "memory": "500Mi", "ephemeral-storage": "1Gi", "pid": "1000"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[v1.ResourceName]string{"cpu": "123m", "memory": "500Mi", "ephemeral-storage": "1Gi", "pid": "1k"}
	for name, w := range want {
		if q := got[name]; q.Cmp(resource.MustParse(w)) != 0 {
			t.Errorf("%s = %s, want %s", name, q.String(), w)
		}
	}
	for _, bad := range []map[string]string{{"nvidia.com/gpu": "1"}, {"cpu": "-1"}, {"memory": "lots"}} {
		if _, err := parseReserved("system-reserved", bad); err == nil || !strings.HasPrefix(err.Error(), "--system-reserved: ") {
			t.Errorf("%v: error %v", bad, err)
		}
	}
}

// The flags (and the config file's maps) reach the node's reservation, with the hard eviction
// thresholds.
func TestNodeReservationFromSettings(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(config, []byte("system-reserved:\n  cpu: 500m\n  memory: 1Gi\neviction-hard: memory.available<200Mi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := defaultOptions()
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	o.addFlags(fs)
	if err := fs.Parse([]string{"--nodename=n1", "--kube-reserved=cpu=250m,ephemeral-storage=2Gi"}); err != nil {
		t.Fatal(err)
	}
	if err := applyConfigFile(fs, config); err != nil {
		t.Fatal(err)
	}
	if err := o.validate(); err != nil {
		t.Fatal(err)
	}
	r, err := o.nodeReservation()
	if err != nil {
		t.Fatal(err)
	}
	capacity := v1.ResourceList{"memory": resource.MustParse("8Gi"), "ephemeral-storage": resource.MustParse("100Gi")}
	hard := r.HardEviction(capacity)
	if q := hard["memory"]; q.Cmp(resource.MustParse("200Mi")) != 0 {
		t.Errorf("eviction reserves %s of memory, want 200Mi", q.String())
	}
	if _, ok := hard["ephemeral-storage"]; ok {
		t.Errorf("eviction reserves ephemeral-storage with only memory.available given: %v", hard)
	}
	if q := r.KubeReserved["cpu"]; q.Cmp(resource.MustParse("250m")) != 0 {
		t.Errorf("kube-reserved cpu %s", q.String())
	}
	if q := r.SystemReserved["memory"]; q.Cmp(resource.MustParse("1Gi")) != 0 {
		t.Errorf("system-reserved memory %s (from the config file)", q.String())
	}
	o.KubeReserved = map[string]string{"gpu": "1"}
	if err := o.validate(); err == nil {
		t.Error("validate accepts --kube-reserved=gpu=1")
	}
}
