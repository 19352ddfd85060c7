// Package logrotate keeps running containers' CRI log files within a size and a count, as the
// kubelet's container log manager does: the current file is renamed with a timestamp suffix
// once it reaches the size limit, the runtime reopens a fresh one (CRI ReopenContainerLog),
// older rotated files are gzipped and the oldest removed, so that at most maxFiles files exist.
package logrotate

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

const (
	// timestampFormat is the suffix of a rotated log, as the kubelet names it.
	timestampFormat = "20060102-150405"
	compressSuffix  = ".gz"
	tmpSuffix       = ".tmp"
)

// Policy is how big a log file may grow and how many files a container's log may have.
type Policy struct {
	// MaxSize in bytes of the current log file before it is rotated; negative: never rotate.
	MaxSize int64
	// MaxFiles counts the current file and the rotated ones; at least 2.
	MaxFiles int
}

// Validate checks the policy as the kubelet checks its configuration.
func (p Policy) Validate() error {
	if p.MaxFiles < 2 {
		return fmt.Errorf("container log max files must be greater than 1, not %d", p.MaxFiles)
	}
	return nil
}

// needsRotation says whether a current log file of this size is rotated now.
func (p Policy) needsRotation(size int64) bool {
	return p.MaxSize >= 0 && size >= p.MaxSize
}

// plan is what one rotation of a container's log does, in order.
type plan struct {
	// Remove are left-overs of interrupted rotations (temporary files, rotated files already
	// compressed) and the oldest rotated files beyond the policy's count.
	Remove []string
	// Compress are the rotated files kept, not compressed yet.
	Compress []string
	// RotateTo is the new name of the current log file.
	RotateTo string
}

// planRotation decides one rotation of the current log file log, given the files named
// "<log>.*" next to it and the time now. After it, the directory holds at most MaxFiles-2
// older rotated files (compressed), the file just rotated and the runtime's new current file.
func planRotation(log string, siblings []string, p Policy, now time.Time) plan {
	inUse, unused := splitUnused(siblings)
	sort.Strings(inUse)
	keep := max(p.MaxFiles-2, 0)
	excess := max(len(inUse)-keep, 0)
	out := plan{
		Remove:   append(unused, inUse[:excess]...),
		RotateTo: log + "." + now.Format(timestampFormat),
	}
	for _, l := range inUse[excess:] {
		if !strings.HasSuffix(l, compressSuffix) {
			out.Compress = append(out.Compress, l)
		}
	}
	return out
}

// splitUnused separates the rotated files that still hold a log from the temporary files
// and the uncompressed originals of files that were compressed already.
func splitUnused(files []string) (inUse, unused []string) {
	present := make(map[string]bool, len(files))
	for _, f := range files {
		present[f] = true
	}
	for _, f := range files {
		switch {
		case strings.HasSuffix(f, tmpSuffix):
			unused = append(unused, f)
		case !strings.HasSuffix(f, compressSuffix) && present[f+compressSuffix]:
			unused = append(unused, f)
		default:
			inUse = append(inUse, f)
		}
	}
	return inUse, unused
}
