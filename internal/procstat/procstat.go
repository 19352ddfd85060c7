// Package procstat reads an agent process's CPU time and memory from /proc, for the benchmarks.
package procstat

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

var clockTicks = func() float64 {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if err == nil {
		if v, err := strconv.Atoi(strings.TrimSpace(string(out))); err == nil && v > 0 {
			return float64(v)
		}
	}
	return 100
}()

func comm(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// AgentPID reads a PID file and, when it names a wrapper (setsid, bash) rather than the agent,
// follows it to its only child.
func AgentPID(pidFile string) (int, string, error) {
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return 0, "", err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, "", fmt.Errorf("%s: %w", pidFile, err)
	}
	for range 3 {
		comm := comm(pid)
		if comm == "" {
			return 0, "", fmt.Errorf("process %d of %s is not running", pid, pidFile)
		}
		if comm != "setsid" && comm != "bash" && comm != "sh" && comm != "unshare" {
			return pid, comm, nil
		}
		kids, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
		f := strings.Fields(string(kids))
		if len(f) != 1 {
			return pid, comm, nil
		}
		pid, _ = strconv.Atoi(f[0])
	}
	return pid, comm(pid), nil
}

// RSSKiB is the process's resident set size (VmRSS) in KiB.
func RSSKiB(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) >= 1 {
				return strconv.ParseFloat(f[0], 64)
			}
		}
	}
	return 0, errors.New("no VmRSS")
}

// CPUSeconds is utime+stime of the whole process (all threads).
func CPUSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, errors.New("malformed stat")
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); utime is field 14, stime field 15.
	if len(f) < 13 {
		return 0, errors.New("short stat")
	}
	ut, err1 := strconv.ParseFloat(f[11], 64)
	st, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return 0, errors.New("malformed stat times")
	}
	return (ut + st) / clockTicks, nil
}
