// Package stackenv reads the settings file hack/stack-up.sh writes for the local stack:
// plain KEY=value lines.
package stackenv

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// DefaultPath is where hack/stack-up.sh writes the file unless VKCRI_STACK_DIR moves it.
const DefaultPath = "/var/run/vk-cri-stack/env"

// Load reads path, or DefaultPath when path is empty.
func Load(path string) (map[string]string, error) {
	if path == "" {
		path = DefaultPath
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("stack env: %w (run hack/stack-up.sh)", err)
	}
	defer f.Close()
	env := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if ok && !strings.HasPrefix(k, "#") {
			env[k] = v
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return env, nil
}
