package stats

import (
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// fsSize is the size of a file system.
type fsSize struct {
	Capacity, Available, Inodes, InodesFree uint64
}

// hostProbe is what the collector reads from the host besides cAdvisor and the runtime; tests
// replace it with fixed answers.
type hostProbe struct {
	now       func() time.Time
	bootTime  func(now time.Time) time.Time
	rlimit    func(now time.Time) *statsapi.RlimitStats
	diskUsage func(dir string) (usage, error)
	fsSize    func(dir string) (fsSize, error)
}

func realHost() hostProbe {
	return hostProbe{now: time.Now, bootTime: bootTime, rlimit: rlimitStats, diskUsage: diskUsage, fsSize: statfsSize}
}

func statfsSize(dir string) (fsSize, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return fsSize{}, err
	}
	bsize := uint64(st.Bsize)
	return fsSize{Capacity: st.Blocks * bsize, Available: st.Bavail * bsize, Inodes: st.Files, InodesFree: st.Ffree}, nil
}

// bootTime is when the machine started, from /proc/uptime.
func bootTime(now time.Time) time.Time {
	b, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return time.Time{}
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return time.Time{}
	}
	up, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return time.Time{}
	}
	return now.Add(-time.Duration(up * float64(time.Second))).Truncate(time.Second)
}

// rlimitStats are the machine's process limit and count, as the kubelet reports them.
func rlimitStats(now time.Time) *statsapi.RlimitStats {
	r := &statsapi.RlimitStats{Time: metav1.NewTime(now)}
	if b, err := os.ReadFile("/proc/sys/kernel/pid_max"); err == nil {
		if v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil {
			r.MaxPID = &v
		}
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		// The fourth field is "running/total" scheduling entities.
		if f := strings.Fields(string(b)); len(f) >= 4 {
			if _, total, ok := strings.Cut(f[3], "/"); ok {
				if v, err := strconv.ParseInt(total, 10, 64); err == nil {
					r.NumOfRunningProcesses = &v
				}
			}
		}
	}
	return r
}
