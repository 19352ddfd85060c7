package volumes

import (
	"errors"
	"fmt"
	"os"

	v1 "k8s.io/api/core/v1"
)

// ErrHostPathForbidden is a volume that is a path of the node (a hostPath volume, or a claim
// bound to a hostPath or local persistent volume) on a node that forbids them.
var ErrHostPathForbidden = errors.New("host path volumes (hostPath, and hostPath or local persistent volumes) are forbidden on this node (--forbid-host-path)")

func (m *Manager) setUpHostPath(src *v1.HostPathVolumeSource) (*mountedVolume, error) {
	if m.forbidHostPath {
		return nil, ErrHostPathForbidden
	}
	if err := checkHostPathType(src.Path, src.Type); err != nil {
		return nil, err
	}
	return &mountedVolume{Path: src.Path}, nil
}

// hostPathKind names what is at path in the words of HostPathType.
func hostPathKind(path string) (v1.HostPathType, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	switch mode := fi.Mode(); {
	case mode.IsDir():
		return v1.HostPathDirectory, nil
	case mode.IsRegular():
		return v1.HostPathFile, nil
	case mode&os.ModeSocket != 0:
		return v1.HostPathSocket, nil
	case mode&os.ModeCharDevice != 0:
		return v1.HostPathCharDev, nil
	case mode&os.ModeDevice != 0:
		return v1.HostPathBlockDev, nil
	}
	return "", fmt.Errorf("only recognise file, directory, socket, block device and character device")
}

// checkHostPathType checks (and for the ...OrCreate types makes) what the volume's type asks for,
// with the kubelet's messages.
func checkHostPathType(path string, t *v1.HostPathType) error {
	if t == nil || *t == v1.HostPathUnset {
		return nil
	}
	want := *t
	switch want {
	case v1.HostPathDirectoryOrCreate:
		if _, err := os.Stat(path); os.IsNotExist(err) {
			return os.MkdirAll(path, 0o755)
		}
		want = v1.HostPathDirectory
	case v1.HostPathFileOrCreate:
		if _, err := os.Stat(path); os.IsNotExist(err) {
			f, err := os.OpenFile(path, os.O_CREATE, 0o644)
			if err != nil {
				return err
			}
			return f.Close()
		}
		want = v1.HostPathFile
	case v1.HostPathDirectory, v1.HostPathFile, v1.HostPathSocket, v1.HostPathCharDev, v1.HostPathBlockDev:
	default:
		return fmt.Errorf("%s is an invalid volume type", want)
	}
	words := map[v1.HostPathType]string{
		v1.HostPathDirectory: "directory", v1.HostPathFile: "file", v1.HostPathSocket: "socket file",
		v1.HostPathCharDev: "character device", v1.HostPathBlockDev: "block device",
	}
	got, err := hostPathKind(path)
	if err != nil {
		return fmt.Errorf("hostPath type check failed, %s is not a %s, unable to determine its type: %w", path, words[want], err)
	}
	if got != want {
		return fmt.Errorf("hostPath type check failed: %s is not a %s, it's a %s", path, words[want], got)
	}
	return nil
}
