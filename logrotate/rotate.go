package logrotate

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// reopener is the runtime call that makes a container write to a new log file.
type reopener interface {
	ReopenContainerLog(ctx context.Context, containerID string) error
}

// rotate carries out a plan for the container's log. When the runtime cannot reopen the log,
// the current file gets its name back so that the next round tries again.
func rotate(ctx context.Context, rt reopener, id, log string, pl plan) error {
	for _, f := range pl.Remove {
		if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("removing old log %s: %w", f, err)
		}
	}
	for _, f := range pl.Compress {
		if err := compress(f); err != nil {
			return err
		}
	}
	if err := os.Rename(log, pl.RotateTo); err != nil {
		return fmt.Errorf("rotating log %s: %w", log, err)
	}
	if err := rt.ReopenContainerLog(ctx, id); err != nil {
		if back := os.Rename(pl.RotateTo, log); back != nil {
			return fmt.Errorf("reopening the log of container %s: %w (and renaming %s back failed: %v: that log is lost to kubectl logs)", id, err, pl.RotateTo, back)
		}
		return fmt.Errorf("reopening the log of container %s: %w", id, err)
	}
	return nil
}

// compress gzips a rotated log to <log>.gz through a temporary file, then removes it.
func compress(log string) error {
	in, err := os.Open(log)
	if err != nil {
		return fmt.Errorf("opening log %s: %w", log, err)
	}
	defer in.Close()
	info, err := in.Stat()
	if err != nil {
		return fmt.Errorf("reading log %s: %w", log, err)
	}
	tmp := log + tmpSuffix
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, info.Mode())
	if err != nil {
		return fmt.Errorf("creating %s: %w", tmp, err)
	}
	defer os.Remove(tmp) // gone by rename on success
	zw := gzip.NewWriter(out)
	_, err = io.Copy(zw, in)
	if cerr := zw.Close(); err == nil {
		err = cerr
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("compressing log %s: %w", log, err)
	}
	if err := os.Rename(tmp, log+compressSuffix); err != nil {
		return fmt.Errorf("renaming %s: %w", tmp, err)
	}
	if err := os.Remove(log); err != nil {
		return fmt.Errorf("removing log %s after compressing it: %w", log, err)
	}
	return nil
}

// RemoveLogs removes a container's log file and every rotated file of it.
func RemoveLogs(log string) error {
	files, err := filepath.Glob(globEscape(log) + "*")
	if err != nil {
		return fmt.Errorf("listing log files of %s: %w", log, err)
	}
	for _, f := range files {
		if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("removing log %s: %w", f, err)
		}
	}
	return nil
}

// rotatedFiles lists the files "<log>.*" next to a current log file.
func rotatedFiles(log string) ([]string, error) {
	files, err := filepath.Glob(globEscape(log) + ".*")
	if err != nil {
		return nil, fmt.Errorf("listing rotated files of %s: %w", log, err)
	}
	return files, nil
}

// globEscape quotes the characters filepath.Glob would read as a pattern.
func globEscape(path string) string {
	out := make([]rune, 0, len(path))
	for _, r := range path {
		switch r {
		case '*', '?', '[', '\\':
			out = append(out, '\\')
		}
		out = append(out, r)
	}
	return string(out)
}
