package volumes

import (
	"os"
	"strings"

	"golang.org/x/sys/unix"
	"k8s.io/apimachinery/pkg/util/version"
)

// tmpfsNoswapSince is the first kernel whose tmpfs takes the noswap option; the kubelet mounts
// memory-backed volumes with it there, so that their contents never reach a swap device.
var tmpfsNoswapSince = version.MustParseGeneric("6.4")

// noswapSupported tells whether tmpfs mounts can be made with noswap: a recent enough kernel,
// outside a user namespace (where the kernel refuses it).
func noswapSupported() bool {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return false
	}
	release, _, _ := strings.Cut(unix.ByteSliceToString(u.Release[:]), "-")
	v, err := version.ParseGeneric(release)
	if err != nil || !v.AtLeast(tmpfsNoswapSince) {
		return false
	}
	return !inUserNamespace()
}

func inUserNamespace() bool {
	b, err := os.ReadFile("/proc/self/uid_map")
	if err != nil {
		return false
	}
	return strings.Join(strings.Fields(string(b)), " ") != "0 0 4294967295"
}
