package oci

import (
	"fmt"
	"os/exec"
	"sort"
	"strings"
)

// BusyboxApplets asks a busybox binary for its applet names (sorted; busybox itself and names
// with a path left out), so that an image can link each one to it.
func BusyboxApplets(busyboxBin string) ([]string, error) {
	out, err := exec.Command(busyboxBin, "--list").Output()
	if err != nil {
		return nil, fmt.Errorf("%s --list: %w", busyboxBin, err)
	}
	var applets []string
	for _, a := range strings.Fields(string(out)) {
		if a == "busybox" || strings.ContainsAny(a, "/.") {
			continue
		}
		applets = append(applets, a)
	}
	if len(applets) == 0 {
		return nil, fmt.Errorf("%s --list printed no applets", busyboxBin)
	}
	sort.Strings(applets)
	return applets, nil
}
