package stackenv

import (
	"os"
	"path/filepath"
	"testing"
)

func TestLoadReadsKeyValueLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "env")
	if err := os.WriteFile(path, []byte("A=1\n# C=3\n\nB=x=y\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(env) != 2 || env["A"] != "1" || env["B"] != "x=y" {
		t.Fatalf("got %v", env)
	}
}

func TestLoadNamesTheMissingFile(t *testing.T) {
	if _, err := Load(filepath.Join(t.TempDir(), "absent")); err == nil {
		t.Fatal("want an error")
	}
}
