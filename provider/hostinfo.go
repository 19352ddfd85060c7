package provider

import (
	"bufio"
	"fmt"
	"github.com/moby/sys/userns"
	"os"
	"runtime"
	"strconv"
	"strings"

	cadvisorapi "github.com/google/cadvisor/lib/model"
	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// hostFacts are read from the machine once at start.
type hostFacts struct {
	CPUs          int
	MemoryBytes   int64
	StorageBytes  int64
	KernelVersion string
	OSImage       string
	MachineID     string
	SystemUUID    string
	BootID        string
	Hostname      string
	// InUserNamespace is true when vk-cri runs in a user namespace other than the host's.
	InUserNamespace bool
	// Declared is the node's declared capacity where it is less than the host's
	// (node_capacity.go).
	Declared v1.ResourceList
}

func readTrimmed(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func memTotal() (int64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("parsing MemTotal: %w", err)
			}
			return kb * 1024, nil
		}
	}
	return 0, fmt.Errorf("no MemTotal in /proc/meminfo")
}

func osImage() string {
	f, err := os.Open("/etc/os-release")
	if err != nil {
		return "Unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "PRETTY_NAME="); ok {
			return strings.Trim(v, `"`)
		}
	}
	return "Unknown"
}

// readHostFacts reads the machine's capacity and identity; rootDir is the file system whose
// size is the node's ephemeral-storage capacity.
func readHostFacts(rootDir string) (hostFacts, error) {
	h := hostFacts{CPUs: runtime.NumCPU()}
	var err error
	if h.MemoryBytes, err = memTotal(); err != nil {
		return h, err
	}
	if err := os.MkdirAll(rootDir, 0o750); err != nil {
		return h, fmt.Errorf("creating root dir: %w", err)
	}
	var fs unix.Statfs_t
	if err := unix.Statfs(rootDir, &fs); err != nil {
		return h, fmt.Errorf("statfs %s: %w", rootDir, err)
	}
	h.StorageBytes = int64(fs.Blocks) * fs.Bsize
	var uts unix.Utsname
	if err := unix.Uname(&uts); err == nil {
		h.KernelVersion = unix.ByteSliceToString(uts.Release[:])
	}
	h.OSImage = osImage()
	h.MachineID = readTrimmed("/etc/machine-id")
	h.SystemUUID = readTrimmed("/sys/class/dmi/id/product_uuid")
	h.BootID = readTrimmed("/proc/sys/kernel/random/boot_id")
	h.Hostname, _ = os.Hostname()
	h.InUserNamespace = userns.RunningInUserNS()
	return h, nil
}

// applyMachineInfo takes capacity and identity from cAdvisor's machine info when there is one.
func (h *hostFacts) applyMachineInfo(mi *cadvisorapi.MachineInfo) {
	if mi == nil {
		return
	}
	if mi.NumCores > 0 {
		h.CPUs = mi.NumCores
	}
	if mi.MemoryCapacity > 0 {
		h.MemoryBytes = int64(mi.MemoryCapacity)
	}
	if mi.MachineID != "" {
		h.MachineID = mi.MachineID
	}
	if mi.SystemUUID != "" {
		h.SystemUUID = mi.SystemUUID
	}
	if mi.BootID != "" {
		h.BootID = mi.BootID
	}
}

// resources are the node's capacity, and its allocatable as the kubelet computes it: the
// capacity less the reservation (nodeAllocatable), an error when the reservation exceeds it.
func (h hostFacts) resources(maxPods int, r NodeReservation) (capacity, allocatable v1.ResourceList, err error) {
	capacity = v1.ResourceList{
		v1.ResourceCPU:              *resource.NewQuantity(int64(h.CPUs), resource.DecimalSI),
		v1.ResourceMemory:           *resource.NewQuantity(h.MemoryBytes, resource.BinarySI),
		v1.ResourceEphemeralStorage: *resource.NewQuantity(h.StorageBytes, resource.BinarySI),
		v1.ResourcePods:             *resource.NewQuantity(int64(maxPods), resource.DecimalSI),
		"hugepages-1Gi":             *resource.NewQuantity(0, resource.BinarySI),
		"hugepages-2Mi":             *resource.NewQuantity(0, resource.BinarySI),
	}
	applyDeclared(capacity, h.Declared)
	allocatable, err = nodeAllocatable(capacity, r)
	return capacity, allocatable, err
}
