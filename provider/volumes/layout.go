package volumes

import (
	"path/filepath"
	"strconv"

	"k8s.io/apimachinery/pkg/types"
)

// Plugin directory names, as the kubelet names them under pods/<uid>/volumes.
const (
	pluginEmptyDir    = "kubernetes.io~empty-dir"
	pluginConfigMap   = "kubernetes.io~configmap"
	pluginSecret      = "kubernetes.io~secret"
	pluginDownwardAPI = "kubernetes.io~downward-api"
	pluginProjected   = "kubernetes.io~projected"
)

// layout is where a pod's files live under vk-cri's root dir, in the kubelet's arrangement.
type layout struct{ root string }

func (l layout) podsDir() string { return filepath.Join(l.root, "pods") }

func (l layout) podDir(uid types.UID) string { return filepath.Join(l.podsDir(), string(uid)) }

func (l layout) volumeDir(uid types.UID, plugin, name string) string {
	return filepath.Join(l.podDir(uid), "volumes", plugin, name)
}

// subPathTarget is where a subPath of a container's index-th volume mount is bind-mounted.
func (l layout) subPathTarget(uid types.UID, volume, container string, index int) string {
	return filepath.Join(l.podDir(uid), "volume-subpaths", volume, container, strconv.Itoa(index))
}
