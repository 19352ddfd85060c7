package volumes

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// EscapeError is a subPath that would lead out of its volume.
type EscapeError struct {
	Volume, SubPath string
	Err             error
}

func (e *EscapeError) Error() string {
	return fmt.Sprintf("subPath %q of volume %q leads outside the volume: %v", e.SubPath, e.Volume, e.Err)
}

func (e *EscapeError) Unwrap() error { return e.Err }

// validateSubPath refuses what the kubelet refuses before looking at the disk: an absolute
// subPath or one with a ".." element.
func validateSubPath(sub string) error {
	if filepath.IsAbs(sub) {
		return fmt.Errorf("error SubPath `%s` must not be an absolute path", sub)
	}
	for _, part := range strings.Split(sub, "/") {
		if part == ".." {
			return fmt.Errorf("unable to provision SubPath `%s`: must not contain '..'", sub)
		}
	}
	return nil
}

// beneath resolves like openat2(RESOLVE_BENEATH): absolute symlinks and ".." that would climb
// above the directory fail with EXDEV, so a symlink planted inside a volume cannot lead out of it,
// even if it changes between the check and the use (the result is an open descriptor).
const beneath = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS

// openBeneath opens rel inside root with O_PATH without leaving root.
func openBeneath(root, rel string) (int, error) {
	rootFD, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("opening volume %s: %w", root, err)
	}
	defer unix.Close(rootFD)
	rel = filepath.Clean(rel)
	if rel == "." {
		return unix.Dup(rootFD)
	}
	fd, err := unix.Openat2(rootFD, rel, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: beneath})
	if err != nil {
		return -1, err
	}
	return fd, nil
}

// openResolvedBeneath opens the subPath rel of root as the kubelet resolves it: its symlinks are
// resolved on the host first and the result is accepted when it lies inside root
// (subpath_linux.go doBindSubPath evaluates the path, then doSafeOpen opens it segment by
// segment, refusing any symlink), so a link that climbs out of the volume and back into it is
// followed. What was resolved is then opened beneath root with no symlink allowed on the way: a
// link swapped in since fails (ELOOP) instead of leading anywhere. A subPath that does not
// resolve (missing, or a dangling link) is opened as it is, for the caller to create.
func openResolvedBeneath(root, rel string) (int, error) {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return -1, fmt.Errorf("resolving volume %s: %w", root, err)
	}
	resolved, err := filepath.EvalSymlinks(filepath.Join(realRoot, rel))
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			return -1, err
		}
		return openBeneath(root, rel)
	}
	inside, err := filepath.Rel(realRoot, resolved)
	if err != nil || inside == ".." || strings.HasPrefix(inside, "../") {
		return -1, unix.EXDEV
	}
	rootFD, err := unix.Open(realRoot, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("opening volume %s: %w", root, err)
	}
	defer unix.Close(rootFD)
	if inside == "." {
		return unix.Dup(rootFD)
	}
	return unix.Openat2(rootFD, inside, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: beneath | unix.RESOLVE_NO_SYMLINKS})
}

// makeDirBeneath creates the missing directories of rel inside root with perm (permission and
// setuid/setgid/sticky bits), never following a symlink out of root.
func makeDirBeneath(root, rel string, perm os.FileMode) error {
	rel = filepath.Clean(rel)
	if rel == "." {
		return nil
	}
	parts := strings.Split(rel, "/")
	for i := range parts {
		prefix := strings.Join(parts[:i+1], "/")
		fd, err := openBeneath(root, prefix)
		if err == nil {
			unix.Close(fd)
			continue
		}
		if !errors.Is(err, unix.ENOENT) {
			return err
		}
		parentFD, err := openBeneath(root, filepath.Join(append([]string{"."}, parts[:i]...)...))
		if err != nil {
			return err
		}
		err = unix.Mkdirat(parentFD, parts[i], uint32(perm.Perm()))
		if err == nil {
			err = chmodBeneath(parentFD, parts[i], perm)
		}
		unix.Close(parentFD)
		if err != nil && !errors.Is(err, unix.EEXIST) {
			return fmt.Errorf("creating %s: %w", prefix, err)
		}
	}
	return nil
}

// chmodBeneath gives the directory name (just created in parentFD) its exact mode, which mkdir's
// umask cut and mkdir never sets the special bits of; it never follows a symlink raced into its
// place.
func chmodBeneath(parentFD int, name string, perm os.FileMode) error {
	fd, err := unix.Openat2(parentFD, name, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: beneath | unix.RESOLVE_NO_SYMLINKS,
	})
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Fchmod(fd, kernelMode(perm))
}

// kernelMode is perm as chmod(2) takes it: Go keeps the setuid, setgid and sticky bits outside
// the permission bits.
func kernelMode(perm os.FileMode) uint32 {
	mode := uint32(perm.Perm())
	if perm&os.ModeSetuid != 0 {
		mode |= unix.S_ISUID
	}
	if perm&os.ModeSetgid != 0 {
		mode |= unix.S_ISGID
	}
	if perm&os.ModeSticky != 0 {
		mode |= unix.S_ISVTX
	}
	return mode
}
